import Foundation
import StrataCore
import StrataEncoding

extension Redaction {
    /// A request or response body as text for a log, with every field the policy covers replaced:
    /// members of JSON objects at any depth, form fields, multipart fields (file parts are shown as
    /// their name, file name, type and size), and XML elements and attributes (matched by local
    /// name, so `<auth:password>` is covered by `password`).
    ///
    /// Any other body — plain text, HTML, binary — and one that does not parse as its type says is
    /// shown only as a summary of its type and size, since nothing in it can be told from a secret.
    public func redact(body: Data, contentType: String?) -> String {
        switch render(body: body, contentType: contentType) {
        case .text(let text), .outline(let text), .summary(let text): return text
        }
    }

    /// What a log can show of a body.
    package enum RenderedBody: Equatable, Sendable {
        /// The body itself, with covered fields replaced.
        case text(String)
        /// A one-line account of the body (a multipart form's fields), covered fields replaced.
        case outline(String)
        /// `<type, size>`: the body could not be shown safely.
        case summary(String)
    }

    /// The body rendered for a log: as text with covered fields replaced, or as a summary.
    package func render(body: Data, contentType: String?) -> RenderedBody {
        let parameters = contentType?.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        let type = parameters.first?.lowercased() ?? ""
        func summary(_ reason: String? = nil) -> RenderedBody {
            .summary(
                "<"
                    + ([type.isEmpty ? nil : type, "\(body.count) bytes", reason].compactMap { $0 }.joined(
                        separator: ", ")) + ">")
        }
        let looksLikeJSON = type.isEmpty && [UInt8(ascii: "{"), UInt8(ascii: "[")].contains(body.first)
        if type == "application/json" || type.hasSuffix("+json") || looksLikeJSON {
            guard !JSONNesting.exceeds(ParameterValue.defaultMaximumDepth, in: body) else {
                return summary("nested too deep to show")
            }
            guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
                let text = renderJSON(object)
            else { return summary(type.isEmpty ? nil : "not valid JSON") }
            return .text(text)
        }
        if type == "application/x-www-form-urlencoded" {
            guard let text = String(data: body, encoding: .utf8) else { return summary("not UTF-8") }
            return .text(redactQuery(Substring(text), keys: bodyFields.union(headerNames)))
        }
        if type == "multipart/form-data" {
            let boundary = parameters.dropFirst().first { $0.lowercased().hasPrefix("boundary=") }
                .map {
                    String($0.dropFirst("boundary=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
            return boundary.flatMap { renderMultipart(body, boundary: $0) }.map(RenderedBody.outline)
                ?? summary("not valid multipart")
        }
        if type == "application/xml" || type == "text/xml" || type.hasSuffix("+xml") {
            return renderXML(body).map(RenderedBody.text) ?? summary("not well-formed XML")
        }
        return summary()
    }

    // MARK: - JSON

    private func renderJSON(_ object: Any) -> String? {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed]
        guard let data = try? JSONSerialization.data(withJSONObject: redactJSON(object), options: options) else {
            return nil
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `value` with covered members replaced. Its depth was bounded before it was parsed.
    private func redactJSON(_ value: Any) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, member) in object {
                result[key] = hidesField(named: key) ? placeholder : redactJSON(member)
            }
            return result
        }
        if let array = value as? [Any] {
            return array.map(redactJSON)
        }
        return value
    }

    // MARK: - Multipart

    /// `multipart/form-data: "name": "value", "file" ("a.png", image/png): 3 bytes`, covered fields
    /// replaced; `nil` when the body is not `multipart/form-data` with this boundary.
    private func renderMultipart(_ body: Data, boundary: String) -> String? {
        let delimiter = Data(("--" + boundary).utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        guard !boundary.isEmpty, var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        var lines: [String] = []
        while true {
            // After a delimiter: `--` ends the body; otherwise a line break, then the part.
            if body[cursor...].starts(with: Data("--".utf8)) {
                return "multipart/form-data: " + lines.joined(separator: ", ")
            }
            guard let start = body.range(of: Data("\r\n".utf8), in: cursor..<body.endIndex)?.upperBound,
                start == body.index(cursor, offsetBy: 2),
                let headersEnd = body.range(of: headerEnd, in: start..<body.endIndex),
                let next = body.range(of: Data("\r\n".utf8) + delimiter, in: headersEnd.upperBound..<body.endIndex),
                let headers = String(data: body[start..<headersEnd.lowerBound], encoding: .utf8)
            else { return nil }
            lines.append(describePart(headers: headers, content: body[headersEnd.upperBound..<next.lowerBound]))
            cursor = next.upperBound
        }
    }

    private func describePart(headers: String, content: Data) -> String {
        var name = "?"
        var fileName: String?
        var type: String?
        for line in headers.components(separatedBy: "\r\n") {
            let (field, value) = line.split(separator: ":", maxSplits: 1).map(String.init).pairOrNil
            switch field?.lowercased() {
            case "content-disposition":
                for parameter in value.split(separator: ";").dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1).map {
                        $0.trimmingCharacters(in: CharacterSet(charactersIn: " \""))
                    }
                    guard pair.count == 2 else { continue }
                    if pair[0].lowercased() == "name" { name = pair[1] }
                    if pair[0].lowercased() == "filename" { fileName = pair[1] }
                }
            case "content-type":
                type = value.trimmingCharacters(in: .whitespaces)
            default:
                continue
            }
        }
        let field = name.debugDescription
        if let fileName {
            let details = [fileName.debugDescription, type].compactMap { $0 }.joined(separator: ", ")
            return "\(field) (\(details)): \(content.count) bytes"
        }
        if hidesField(named: name) { return "\(field): \(placeholder)" }
        guard type.map({ $0.lowercased().hasPrefix("text/plain") }) ?? true,
            let text = String(data: content, encoding: .utf8)
        else { return "\(field) (\(type ?? "binary")): \(content.count) bytes" }
        return "\(field): \(text.debugDescription)"
    }

    // MARK: - XML

    private func renderXML(_ body: Data) -> String? {
        guard let tree = try? XMLDecoder.parse(body) else { return nil }
        return try? XMLWriter(includesDeclaration: false).write(redactXML(tree))
    }

    /// `element` with covered elements' content and covered attributes' values replaced. The
    /// parser has bounded the depth.
    private func redactXML(_ element: XMLTree) -> XMLTree {
        var element = element
        element.attributes = element.attributes.map { attribute in
            hidesField(named: Self.localName(attribute.name)) ? (attribute.name, placeholder) : attribute
        }
        if hidesField(named: Self.localName(element.name)) {
            element.children = [.text(placeholder)]
            return element
        }
        element.children = element.children.map { child in
            if case .element(let nested) = child { return .element(redactXML(nested)) }
            return child
        }
        return element
    }

    private static func localName(_ name: String) -> String {
        name.split(separator: ":").last.map(String.init) ?? name
    }
}

extension Array where Element == String {
    /// The first two elements, the second empty if missing; `(nil, "")` for an empty array.
    fileprivate var pairOrNil: (String?, String) {
        (first, count > 1 ? self[1] : "")
    }
}
