import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP header field: a name and its value.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    /// The field name, as given. Comparisons between names ignore case.
    public let name: String
    /// The field value.
    public let value: String

    /// Creates a header field.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `name: value`, the value hidden when ``Redaction/standard`` covers the name.
    public var description: String {
        "\(name): \(Redaction.standard.hidesHeader(named: name) ? Redaction.standard.placeholder : value)"
    }
}

/// An ordered list of HTTP header fields whose names compare case-insensitively (RFC 9110 §5.1).
///
/// Order is kept as fields are added, and a name may appear more than once (for example
/// `Set-Cookie`). Reading by name returns the first field with that name, in any case:
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers["accept"]                     // "application/json"
/// headers["Authorization"] = "Bearer t" // adds, or replaces every existing Authorization
/// ```
public struct HTTPHeaders: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    private var fields: [HTTPHeader]

    /// Creates an empty list.
    public init() {
        fields = []
    }

    /// Creates a list from fields, in the given order.
    public init(_ fields: [HTTPHeader]) {
        self.fields = fields
    }

    /// Creates a list from a dictionary. A dictionary has no order, so fields are sorted by name to
    /// keep requests reproducible.
    public init(_ dictionary: [String: String]) {
        self.init(sortingByName: dictionary.map { HTTPHeader(name: $0.key, value: $0.value) })
    }

    /// Creates a list from fields in no particular order, sorted by name as a dictionary's are.
    package init(sortingByName fields: [HTTPHeader]) {
        self.fields = fields.sorted { $0.name.caseInsensitivelyPrecedes($1.name) }
    }

    /// Creates a list from a literal, keeping the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { HTTPHeader(name: $0.0, value: $0.1) }
    }

    /// The first value for `name`, compared without case. Setting a value replaces every field
    /// with that name by one field at the position of the first; setting `nil` removes them all.
    public subscript(name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// The first value for `name`, compared without case.
    public func value(for name: String) -> String? {
        fields.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value for `name`, in order, compared without case.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map { $0.value }
    }

    /// Every value for `name` joined by commas, as RFC 9110 (5.3) combines a repeated field;
    /// `nil` when there is none.
    package func joinedValue(for name: String) -> String? {
        var joined: String?
        for field in fields where field.name.caseInsensitiveEquals(name) {
            // Appended in place: a head of thousands of such fields costs their length, not its square.
            if joined == nil {
                joined = field.value
            } else {
                joined?.append(", ")
                joined?.append(field.value)
            }
        }
        return joined
    }

    /// Whether a field with `name` exists, compared without case.
    public func contains(name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveEquals(name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(name: String, value: String) {
        fields.append(HTTPHeader(name: name, value: value))
    }

    /// Sets the single value of `name`: the first existing field with that name is replaced in place
    /// and the others are removed; if there is none, the field is appended.
    public mutating func update(name: String, value: String) {
        guard let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) else {
            fields.append(HTTPHeader(name: name, value: value))
            return
        }
        fields[index] = HTTPHeader(name: name, value: value)
        var position = fields.index(after: index)
        while position < fields.endIndex {
            if fields[position].name.caseInsensitiveEquals(name) {
                fields.remove(at: position)
            } else {
                position = fields.index(after: position)
            }
        }
    }

    /// Removes every field with `name`, compared without case.
    public mutating func remove(name: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
    }

    /// This list with every name of `other` set to the values `other` has for it: `other` wins.
    ///
    /// Linear in the number of fields of both.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        guard !other.isEmpty, !isEmpty else { return other.isEmpty ? self : other }
        guard other.count > Self.scannedCount else {
            return HTTPHeaders(fields.filter { !other.contains(name: $0.name) } + other.fields)
        }
        let replaced = Set(other.fields.map { FieldName($0.name) })
        return HTTPHeaders(fields.filter { !replaced.contains(FieldName($0.name)) } + other.fields)
    }

    /// The fields as a dictionary, as `URLRequest` takes them. Repeated names are joined with `", "`
    /// under the spelling of their first occurrence (RFC 9110 §5.3).
    ///
    /// Linear in the number of fields, however many names repeat: a response's fields come from the
    /// server.
    public var dictionary: [String: String] {
        var result = [String: String](minimumCapacity: fields.count)
        for (index, first) in firstOccurrences.enumerated() {
            if first == index {
                result[fields[index].name] = fields[index].value
            } else {
                result[fields[first].name, default: ""] += ", " + fields[index].value
            }
        }
        return result
    }

    /// Up to this many fields (a request's, as a rule) are matched by name with a scan, which
    /// beats hashing each name; beyond, through a table, so that the work stays linear however many
    /// fields a server sends.
    fileprivate static let scannedCount = 16

    /// For each field, the position of the first field with its name, in any case.
    private var firstOccurrences: [Int] {
        guard fields.count > Self.scannedCount else {
            return fields.indices.map { index in
                fields[..<index].firstIndex { $0.name.caseInsensitiveEquals(fields[index].name) } ?? index
            }
        }
        var firsts = [FieldName: Int](minimumCapacity: fields.count)
        return fields.indices.map { index in
            let name = FieldName(fields[index].name)
            if let first = firsts[name] { return first }
            firsts[name] = index
            return index
        }
    }

    /// The position of the first field.
    public var startIndex: Int { fields.startIndex }
    /// The position after the last field.
    public var endIndex: Int { fields.endIndex }
    /// The field at `position`.
    public subscript(position: Int) -> HTTPHeader { fields[position] }

    /// One `name: value` line per field; values of names ``Redaction/standard`` covers are hidden.
    public var description: String { fields.map(\.description).joined(separator: "\n") }

    /// Two lists are equal when they hold the same fields in the same order, names compared
    /// without case.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy {
                $0.name.caseInsensitiveEquals($1.name) && $0.value == $1.value
            }
    }

    /// Hashes names without case, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields.count)
        for field in fields {
            hasher.combine(FieldName(field.name))
            hasher.combine(field.value)
        }
    }
}

/// A field name as a key that ignores case: hashed and compared by its bytes with ASCII letters
/// folded, where `lowercased()` would make a string of each (a few thousand instructions a name).
private struct FieldName: Hashable {
    let name: String

    init(_ name: String) {
        self.name = name
    }

    static func == (lhs: FieldName, rhs: FieldName) -> Bool {
        lhs.name.caseInsensitiveEquals(rhs.name)
    }

    func hash(into hasher: inout Hasher) {
        var name = name
        name.withUTF8 { bytes in
            // Folded on the stack and hashed at once: a byte at a time costs the hasher a round each.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bytes.count) { folded in
                for index in bytes.indices {
                    folded[index] = String.asciiLowercase(bytes[index])
                }
                hasher.combine(bytes: UnsafeRawBufferPointer(folded))
            }
        }
    }
}

extension String {
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool {
        // Field names are ASCII tokens (RFC 9110 §5.1): comparing their bytes folded to lowercase
        // allocates nothing, unlike `lowercased()` on a name longer than 15 bytes. Names of
        // different lengths differ, which settles most comparisons of a lookup at once; the rest
        // compare their stored bytes directly, several times faster than through `UTF8View`.
        guard utf8.count == other.utf8.count else { return false }
        var (lhs, rhs) = (self, other)
        return lhs.withUTF8 { lhs in
            rhs.withUTF8 { rhs in
                for index in lhs.indices where Self.asciiLowercase(lhs[index]) != Self.asciiLowercase(rhs[index]) {
                    return false
                }
                return true
            }
        }
    }

    /// Whether this name sorts before `other` with ASCII letters folded to lowercase; the order of
    /// `lowercased()` for ASCII names, without allocating (every response's fields are sorted).
    fileprivate func caseInsensitivelyPrecedes(_ other: String) -> Bool {
        utf8.lexicographicallyPrecedes(other.utf8) { Self.asciiLowercase($0) < Self.asciiLowercase($1) }
    }

    fileprivate static func asciiLowercase(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}

extension URLRequest {
    /// The value of the field `name`, in any case: `value(forHTTPHeaderField:)`, at a sixth of its
    /// cost on Linux, where FoundationNetworking compares each name through `CFString` with a
    /// locale (three look-ups on a request of four fields took 10,100 instructions, against 1,300
    /// for three of these).
    package func headerField(_ name: String) -> String? {
        guard let fields = allHTTPHeaderFields, !fields.isEmpty else { return nil }
        return fields.first { $0.key.caseInsensitiveEquals(name) }?.value
    }

    /// The request's target URI (RFC 9110 §7.1): its URL, with the authority a `Host` field of
    /// its own names in place of the URL's, the host lowercased — the host a virtual host behind
    /// the URL's address answers for. `nil` without a URL, or when the field names no authority (a
    /// path, user information, a port that is not a number, an empty value).
    package var targetURL: URL? {
        guard let url, let field = headerField("Host") else { return url }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true), let scheme = components.scheme,
            let authority = URLComponents(string: "\(scheme)://\(field.trimmingCharacters(in: .whitespaces))"),
            let host = authority.percentEncodedHost, !host.isEmpty,
            authority.percentEncodedPath.isEmpty, authority.percentEncodedQuery == nil,
            authority.fragment == nil, authority.percentEncodedUser == nil, authority.percentEncodedPassword == nil
        else { return nil }
        components.percentEncodedHost = host.lowercased()
        components.port = authority.port
        return components.url
    }

    /// Sets the field `name` to `value`, or removes it for `nil`, replacing a field of that name in
    /// any case; with `keepingExisting`, only if the request has no such field.
    ///
    /// What `setValue(_:forHTTPHeaderField:)` does, with the name kept as written (as Apple
    /// platforms keep it) and at a fifth of its cost on Linux, where FoundationNetworking copies
    /// every field and capitalizes the name on each call (some 16,000 instructions). Like it, this
    /// changes the request: FoundationNetworking traps on changing a copy of one without a URL.
    public mutating func setHeaderField(_ name: String, _ value: String?, keepingExisting: Bool = false) {
        setHeaderFields(CollectionOfOne((name, value)), keepingExisting: keepingExisting)
    }

    /// ``setHeaderField(_:_:keepingExisting:)`` for each of `fields` in order, written to the
    /// request at once.
    ///
    /// Linear in the fields of both: the request's names are matched by a scan while they are few,
    /// through a table once they are many.
    public mutating func setHeaderFields(_ fields: some Sequence<(String, String?)>, keepingExisting: Bool = false) {
        var all = allHTTPHeaderFields ?? [:]
        var names: [FieldName: String]?
        var changed = false
        for (name, value) in fields {
            if names == nil, all.count > HTTPHeaders.scannedCount {
                names = Dictionary(all.keys.map { (FieldName($0), $0) }, uniquingKeysWith: { first, _ in first })
            }
            let existing = names.map { $0[FieldName(name)] } ?? all.keys.first { $0.caseInsensitiveEquals(name) }
            if let existing {
                if keepingExisting || (existing == name && all[existing] == value) { continue }
                all[existing] = nil
                names?[FieldName(existing)] = nil
                changed = true
            }
            if let value {
                all[name] = value
                names?[FieldName(name)] = name
                changed = true
            }
        }
        if changed {
            allHTTPHeaderFields = all
        }
    }
}
