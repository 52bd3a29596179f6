import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One `Set-Cookie` field, read as RFC 6265 §5.2 says (and its revision, 6265bis, where it is
/// stricter), and what it does to a jar for a response from a URL (§5.3).
///
/// Strata reads the fields itself rather than through `HTTPCookie.cookies(withResponseHeaderFields:for:)`:
/// on Linux that ignores `Max-Age` (so `Max-Age=0`, how a server logs a session out, left the
/// cookie in place) and accepts a `Domain` of one label (`Domain=.com`: a cookie for every host
/// under it), and the storage it fills sends `Secure` cookies over `http` and ignores `Path`.
struct SetCookie: Equatable {
    var name: String
    var value: String
    /// `Expires`, read as an HTTP date.
    var expires: Date?
    /// `Max-Age` in seconds, which wins over `Expires`.
    var maxAge: Int?
    /// `Domain`, lowercased, without a leading dot.
    var domain: String?
    /// `Path`, when it begins with a slash.
    var path: String?
    var secure = false
    var httpOnly = false
    var sameSite: String?

    /// The most bytes a name and value may hold together (6265bis §5.7 step 6).
    static let maximumNameAndValueLength = 4_096
    /// The most bytes an attribute's value may hold; a longer one is ignored (6265bis §5.7).
    static let maximumAttributeValueLength = 1_024

    /// Reads `field`; `nil` when it sets no cookie: no `=` in its first part, an empty name, a
    /// control character in the name or value, or a name and value longer than 4,096 bytes.
    init?(_ field: String) {
        var parts = field.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let pair = parts.next(), let equals = pair.firstIndex(of: "=") else { return nil }
        name = Self.trimmed(pair[..<equals])
        value = Self.trimmed(pair[pair.index(after: equals)...])
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= Self.maximumNameAndValueLength,
            Self.isCookieText(name), Self.isCookieText(value)
        else { return nil }
        while let attribute = parts.next() {
            let (key, attributeValue): (String, String)
            if let equals = attribute.firstIndex(of: "=") {
                (key, attributeValue) = (
                    Self.trimmed(attribute[..<equals]), Self.trimmed(attribute[attribute.index(after: equals)...])
                )
            } else {
                (key, attributeValue) = (Self.trimmed(attribute), "")
            }
            guard attributeValue.utf8.count <= Self.maximumAttributeValueLength else { continue }
            switch key.lowercased() {
            case "expires":
                if let date = Self.date(attributeValue) { expires = date }
            case "max-age":
                maxAge = Self.maxAge(attributeValue) ?? maxAge
            case "domain":
                guard !attributeValue.isEmpty else { continue }
                let domain = attributeValue.hasPrefix(".") ? String(attributeValue.dropFirst()) : attributeValue
                self.domain = domain.lowercased()
            case "path":
                path = attributeValue.hasPrefix("/") ? attributeValue : nil
            case "secure": secure = true
            case "httponly": httpOnly = true
            case "samesite": sameSite = attributeValue
            default: continue
            }
        }
    }

    /// A cookie date, read as §5.1.1 says: leniently, as servers write them (`Wed, 21 Oct 2099
    /// 07:28:00 GMT`, `Wed, 21-Oct-2099 07:28:00 GMT`, `Wednesday, 21-Oct-99 07:28:00 GMT`, the
    /// asctime form), always in UTC; `nil` for one without a time, a day, a month and a year, or
    /// with one out of range.
    static func date(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var (day, month, year): (Int?, Int?, Int?)
        // Delimiters: tab, space to '/', ';' to '@', '[' to '`', '{' to '~'.
        let tokens = text.utf8.split { byte in
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
                || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
        }
        for token in tokens {
            if time == nil, let parsed = Self.time(token) {
                time = parsed
            } else if day == nil, let digits = Self.leadingDigits(token, 1...2) {
                day = digits
            } else if month == nil, let parsed = Self.month(token) {
                month = parsed
            } else if year == nil, let digits = Self.leadingDigits(token, 2...4) {
                year = digits
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard year >= 1601, (1...Self.daysIn(month, of: year)).contains(day), time.hour <= 23, time.minute <= 59,
            time.second <= 59
        else { return nil }
        let days = Self.daysSinceEpoch(year: year, month: month, day: day)
        return Date(
            timeIntervalSince1970: TimeInterval(((days * 24 + time.hour) * 60 + time.minute) * 60 + time.second))
    }

    /// `hh:mm:ss` (one or two digits each) at the start of `token`, then anything but a digit.
    private static func time(_ token: Substring.UTF8View.SubSequence) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var index = token.startIndex
        while fields.count < 3 {
            var value = 0
            var digits = 0
            while index < token.endIndex, (0x30...0x39).contains(token[index]), digits < 3 {
                value = value * 10 + Int(token[index] - 0x30)
                digits += 1
                index = token.index(after: index)
            }
            guard (1...2).contains(digits) else { return nil }
            fields.append(value)
            if fields.count < 3 {
                guard index < token.endIndex, token[index] == UInt8(ascii: ":") else { return nil }
                index = token.index(after: index)
            }
        }
        if index < token.endIndex, (0x30...0x39).contains(token[index]) { return nil }
        return (fields[0], fields[1], fields[2])
    }

    /// The number `token` starts with, if it has `count` digits, then anything but a digit.
    private static func leadingDigits(_ token: Substring.UTF8View.SubSequence, _ count: ClosedRange<Int>) -> Int? {
        let digits = token.prefix { (0x30...0x39).contains($0) }
        guard count.contains(digits.count) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The month whose first three letters `token` starts with, any case.
    private static func month(_ token: Substring.UTF8View.SubSequence) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return months.firstIndex(of: prefix).map { $0 + 1 }
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the date, in the proleptic Gregorian calendar.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// `Max-Age`'s value: an optional minus and digits (§5.2.2), clamped to what an `Int` holds.
    private static func maxAge(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let magnitude = Int(digits) ?? Int.max
        return text.hasPrefix("-") ? -magnitude : magnitude
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.trimmingCharacters(in: CharacterSet(charactersIn: " \t")))
    }

    /// Whether `text` holds no control character but a tab (6265bis §5.7 steps 3 and 4).
    static func isCookieText(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    // MARK: - What it does to a jar (§5.3)

    /// What storing the field for a response from a URL comes to.
    enum Effect: Equatable {
        /// Store this cookie, replacing one of the same name, domain and path.
        case store(HTTPCookie)
        /// Remove the cookie of this name, domain and path (its expiry has passed: `Max-Age=0`,
        /// or an `Expires` in the past).
        case remove(name: String, domain: String, path: String)

        /// The cookie it stores or removes.
        var cookie: Identity {
            switch self {
            case .store(let cookie): Identity(name: cookie.name, domain: cookie.domain, path: cookie.path)
            case .remove(let name, let domain, let path): Identity(name: name, domain: domain, path: path)
            }
        }
    }

    /// The name, domain and path that name a cookie (the domain without case).
    struct Identity: Hashable {
        let name: String
        let domain: String
        let path: String

        init(name: String, domain: String, path: String) {
            (self.name, self.domain, self.path) = (name, domain.lowercased(), path)
        }

        init(_ cookie: HTTPCookie) {
            self.init(name: cookie.name, domain: cookie.domain, path: cookie.path)
        }
    }

    /// What the `Set-Cookie` fields of one response from `url` do, one effect for each cookie they
    /// name — the last — in the order the cookies were first named: storing these leaves a jar as
    /// taking every field in turn would, with one storage call for a cookie a server repeats a
    /// thousand times. Fields that set nothing are left out.
    static func lastEffects<Fields: Sequence>(
        of fields: Fields, forResponseFrom url: URL, at now: Date
    ) -> [Effect] where Fields.Element: StringProtocol {
        var effects: [Effect] = []
        var places: [Identity: Int] = [:]
        for field in fields {
            guard let effect = SetCookie(String(field))?.effect(forResponseFrom: url, at: now) else { continue }
            if let place = places[effect.cookie] {
                effects[place] = effect
            } else {
                places[effect.cookie] = effects.count
                effects.append(effect)
            }
        }
        return effects
    }

    /// What the field does for a response from `url` at `now`; `nil` when it is ignored: a
    /// `Domain` the host is not within, or of one label (Strata carries no public-suffix list,
    /// so `co.uk` is not refused), a `Domain` for an IP address other than itself, `Secure` over
    /// `http`, or a `__Secure-` or `__Host-` name without what its prefix asks for.
    func effect(forResponseFrom url: URL, at now: Date) -> Effect? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        let secureOrigin = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        if secure, !secureOrigin { return nil }
        if name.hasPrefix("__Secure-"), !secure { return nil }
        if name.hasPrefix("__Host-"), !secure || domain != nil || path != "/" { return nil }
        let cookieDomain: String
        // A `Domain` that is the host itself makes a domain cookie too (§5.3 step 6), except on an
        // address or a host of one label, which have no hosts within them.
        if let domain, domain != host || (domain.contains(".") && !Self.isIPAddress(host)) {
            guard Self.isWithin(host, domain: domain), domain.contains("."), !Self.isIPAddress(host) else { return nil }
            // A leading dot: the cookie goes to the domain's hosts too.
            cookieDomain = "." + domain
        } else {
            // Host-only: to this host alone.
            cookieDomain = host
        }
        let cookiePath = path ?? Self.defaultPath(of: url)
        let expiry: Date? =
            if let maxAge { maxAge <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(maxAge)) } else { expires }
        if let expiry, expiry <= now {
            return .remove(name: name, domain: cookieDomain, path: cookiePath)
        }
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name, .value: value, .domain: cookieDomain, .path: cookiePath,
        ]
        if let expiry { properties[.expires] = min(expiry, .distantFuture) }
        if secure { properties[.secure] = "TRUE" }
        if httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        if let sameSite { properties[HTTPCookiePropertyKey("SameSite")] = sameSite }
        return HTTPCookie(properties: properties).map(Effect.store)
    }

    /// Whether `host` is `domain` or a host within it (§5.1.3, domain-match).
    static func isWithin(_ host: String, domain: String) -> Bool {
        host == domain || (host.hasSuffix(domain) && host.dropLast(domain.count).hasSuffix("."))
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count == 4 && labels.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && UInt8($0) != nil }
    }

    /// The path a cookie without `Path` gets (§5.1.4): the request path up to its last slash.
    static func defaultPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// Whether a request for `requestPath` carries a cookie of `cookiePath` (§5.1.4, path-match).
    static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    /// The fields of a `Set-Cookie` value that joins several with commas, as FoundationNetworking
    /// reports repeated fields: a comma starts a new field only when what follows it, up to the
    /// next `;` or comma, holds a `=` (an `Expires` date's comma does not).
    static func split(joined value: String) -> [Substring] {
        var fields: [Substring] = []
        var start = value.startIndex
        var index = value.startIndex
        while let comma = value[index...].firstIndex(of: ",") {
            let rest = value[value.index(after: comma)...]
            let next = rest.prefix { $0 != ";" && $0 != "," }
            if next.contains("=") {
                fields.append(value[start..<comma])
                start = value.index(after: comma)
            }
            index = value.index(after: comma)
        }
        fields.append(value[start...])
        return fields
    }
}
