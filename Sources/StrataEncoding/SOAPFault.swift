import Foundation

/// A SOAP fault: the error a SOAP 1.1 or 1.2 service answers with, whatever prefix its envelope uses.
///
/// ``XMLDecoder/decode(_:fromSOAPEnvelope:)`` throws one when the body holds a `Fault`; read one
/// from any body with `SOAPFault(from:)`.
///
/// ```swift
/// do {
///     let quote = try XMLDecoder().decode(Quote.self, fromSOAPEnvelope: body)
/// } catch let fault as SOAPFault where fault.code == "Sender" {
///     print(fault.reason)
/// }
/// ```
public struct SOAPFault: Error, Hashable, Sendable {
    /// The version of the envelope, from its namespace (or, for an unknown namespace, from the
    /// fault's shape).
    public var version: XMLEncoding.SOAPVersion
    /// The fault code's local name: `Client`, `Server`, `VersionMismatch`, `MustUnderstand` (1.1,
    /// dotted extensions such as `Client.Authentication` kept), `Sender`, `Receiver`,
    /// `DataEncodingUnknown` (1.2).
    public var code: String
    /// The SOAP 1.2 subcodes' local names, outermost first.
    public var subcodes: [String]
    /// The human-readable reason: `faultstring` (1.1), or the first `Reason/Text` (1.2).
    public var reason: String
    /// The node that faulted: `faultactor` (1.1) or `Node` (1.2).
    public var node: String?
    /// The role the faulting node played (1.2 `Role`).
    public var role: String?
    /// The `detail` (1.1) or `Detail` (1.2) element, for decoding with ``XMLDecoder/decode(_:from:)-(_,XMLTree)``.
    public var detail: XMLTree?

    /// Creates a fault.
    public init(
        version: XMLEncoding.SOAPVersion, code: String, subcodes: [String] = [], reason: String,
        node: String? = nil, role: String? = nil, detail: XMLTree? = nil
    ) {
        self.version = version
        self.code = code
        self.subcodes = subcodes
        self.reason = reason
        self.node = node
        self.role = role
        self.detail = detail
    }

    /// The fault in the SOAP envelope `data`, or `nil` when `data` is not a SOAP envelope whose body
    /// holds a fault.
    public init?(from data: Data, maximumDepth: Int = XMLDecoder().maximumDepth) {
        guard let nodes = try? XMLReader.parse(data, maximumDepth: maximumDepth),
            let content = try? Self.bodyContent(of: nodes)
        else { return nil }
        self.init(nodes, content)
    }

    /// The first element in the body of the envelope `nodes`.
    static func bodyContent(of nodes: XMLNodes) throws(XMLError) -> Int {
        let envelope = 0
        guard localName(nodes.nodes[envelope]) == "Envelope",
            let body = nodes.elementChildren(of: envelope).first(where: { localName(nodes.nodes[$0]) == "Body" }),
            let content = nodes.elementChildren(of: body).first
        else {
            throw .malformedDocument(line: 0, column: 0, reason: "not a SOAP envelope with an element in its Body")
        }
        return content
    }

    /// The fault at `element`, or `nil` when it is not a `Fault`.
    init?(_ nodes: XMLNodes, _ element: Int) {
        guard Self.localName(nodes.nodes[element]) == "Fault" else { return nil }
        let children = Dictionary(
            nodes.elementChildren(of: element).map { (Self.localName(nodes.nodes[$0]), $0) },
            uniquingKeysWith: { first, _ in first })
        func text(_ element: Int?) -> String? {
            element.map { nodes.textContent(of: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        func child(_ name: String, of element: Int?) -> Int? {
            element.flatMap { parent in
                nodes.elementChildren(of: parent).first { Self.localName(nodes.nodes[$0]) == name }
            }
        }
        let namespaced = Self.envelopeVersion(nodes)
        if let code = children["Code"] {
            version = namespaced ?? .v1_2
            self.code = Self.localPart(text(child("Value", of: code)) ?? "")
            var subcodes: [String] = []
            var subcode = child("Subcode", of: code)
            while let current = subcode, subcodes.count < 32 {
                subcodes.append(Self.localPart(text(child("Value", of: current)) ?? ""))
                subcode = child("Subcode", of: current)
            }
            self.subcodes = subcodes
            reason = text(child("Text", of: children["Reason"])) ?? ""
            node = text(children["Node"])
            role = text(children["Role"])
            detail = children["Detail"].map { nodes.tree(at: $0) }
        } else {
            version = namespaced ?? .v1_1
            code = Self.localPart(text(children["faultcode"]) ?? "")
            subcodes = []
            reason = text(children["faultstring"]) ?? ""
            node = text(children["faultactor"])
            role = nil
            detail = children["detail"].map { nodes.tree(at: $0) }
        }
    }

    /// The version the envelope's namespace names, if it names one.
    private static func envelopeVersion(_ nodes: XMLNodes) -> XMLEncoding.SOAPVersion? {
        let root = nodes.nodes[0]
        let prefix = root.colon < 0 ? "" : String(Substring(root.name.utf8.prefix(Int(root.colon))))
        let declaration = prefix.isEmpty ? "xmlns" : "xmlns:" + prefix
        let namespace = nodes.attributes[Int(root.firstAttribute)..<Int(root.attributeEnd)]
            .first { $0.name == declaration }?.value
        return [XMLEncoding.SOAPVersion.v1_1, .v1_2].first { $0.namespace == namespace }
    }

    private static func localName(_ node: XMLNodes.Node) -> Substring {
        node.colon < 0 ? Substring(node.name) : Substring(node.name.utf8.dropFirst(Int(node.colon) + 1))
    }

    /// `Server` for `soap:Server`.
    private static func localPart(_ qualifiedName: String) -> String {
        qualifiedName.split(separator: ":", maxSplits: 1).last.map(String.init) ?? qualifiedName
    }
}

extension SOAPFault: CustomStringConvertible {
    /// The code, subcodes and reason (the detail is left out: it may echo what was sent).
    public var description: String {
        let codes = ([code] + subcodes).joined(separator: "/")
        return "SOAP \(version == .v1_1 ? "1.1" : "1.2") fault \(codes): \(reason)"
    }
}
