import Foundation
import StrataCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP cache for a ``SessionManager``: responses kept in memory, and on disk if you give it a
/// folder, and reused as RFC 9111 allows. It works the same on every platform and transport (on
/// Linux, `URLCache` stores nothing).
///
/// ```swift
/// let cache = HTTPCache(memoryCapacity: 20 * 1_048_576, directory: cachesFolder.appending(path: "api"))
/// let manager = SessionManager(cache: cache)
/// ```
///
/// What it does, for `GET` requests received in memory (not downloads):
/// - **Stores** a response to a request without `Cache-Control: no-store` when its status is one
///   a cache may keep (200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501), it has no
///   `Cache-Control: no-store`, no `Vary: *`, and either a freshness lifetime (`max-age`, or
///   `Expires`) or a validator (`ETag`, `Last-Modified`) to revalidate it with. A shared cache
///   (``isShared``) also refuses `private` responses, honours `s-maxage` before `max-age`, and keeps
///   a response to a request with `Authorization` only when `public`, `s-maxage` or
///   `must-revalidate` allows it.
/// - **Reuses** a stored response while it is fresh (its age, counted as RFC 9111 §4.2.3 says, is
///   below its lifetime), and only for a request with the same values of the headers its `Vary`
///   names, as the request goes on the wire: with the cookies the transport adds
///   (``Transport/cookieJar``). A private cache also keys every response by its request's
///   `Authorization`, as if its `Vary` named it: a response to one user's request never answers
///   another user signed in on the same manager, nor a request without a credential, nor the other
///   way round. (A credential that changes with every request — a signature, such as AWS
///   Signature Version 4's — makes each such response a variant no later request matches: send
///   those requests with `Cache-Control: no-store`.) Of several that suit, the most recent by
///   `Date` answers; the transport is not asked at all, and the answer carries an `Age` field
///   with its current age.
///   `Cache-Control: no-cache` in the response, or `no-cache` in the request, means revalidating
///   every time; a request's `max-age` and `min-fresh` are obeyed, and `only-if-cached` gets a
///   stored response or a `504`, never the network.
/// - **Revalidates** a stale response that has a validator: the request goes out with
///   `If-None-Match` / `If-Modified-Since`; a `304` refreshes the stored response's headers and
///   lifetime and the caller gets the stored response, as a `200` with its body.
/// - **Invalidates** what it stored for a URL when a request to it of any method not known to be
///   safe (`POST`, `PUT`, `PATCH`, `DELETE`, and any other but `GET`, `HEAD`, `OPTIONS`, `TRACE`)
///   gets a `2xx` or `3xx`.
///
/// The article "Caching by RFC 9111" lists each requirement of RFC 9111 the cache keeps, with the
/// test that shows it.
///
/// A request that carries its own `If-None-Match` or `If-Modified-Since` is sent as it is, and its
/// `304` reaches the caller. A body larger than a quarter of ``memoryCapacity`` is not kept, nor
/// more than ``maximumVariants`` responses for one URL (the one stored longest ago goes). On
/// disk, entries are plain files holding URLs and bodies: give the cache a folder only your app
/// can read. A response kept for a credential — it varies by `Cookie` or `Authorization`, which
/// its request carried, or answers a request with `Authorization` in a private cache — is kept in
/// memory only.
public final class HTTPCache: Sendable {
    /// Whether the cache is shared by several users (a proxy, a server for many clients) rather
    /// than private to one. `false` by default: an app's cache is private.
    public let isShared: Bool
    /// The most bytes kept in memory — each entry's body, its header fields, URL and `Vary`
    /// values, and ``entryOverhead`` — ; the entries used least recently go first.
    public let memoryCapacity: Int
    /// Where entries are also written, one file each; `nil` for memory only.
    public let directory: URL?
    /// The most bytes of files kept in ``directory``; the files written longest ago go first.
    public let diskCapacity: Int

    private struct Memory: Sendable {
        var entries: [String: [CachedExchange]] = [:]
        var order = RecencyOrder<String>()
        var size = 0
    }

    private let memory = Locked(Memory())
    package let now: @Sendable () -> Date
    /// Writes and removes files in order, off the thread that answered.
    private let disk = DispatchQueue(label: "Strata.HTTPCache.disk")
    /// The files in ``directory`` with their sizes, read from the folder when first written to;
    /// used on `disk` only.
    private let files = Locked<DiskFiles?>(nil)

    /// Creates a cache.
    /// - Parameters:
    ///   - memoryCapacity: The most bytes kept in memory; 16 MiB by default.
    ///   - directory: A folder to also keep entries in, which survive the process; `nil` for none.
    ///     It may hold files of the app's: the cache counts, trims and removes only its own.
    ///   - diskCapacity: The most bytes of files kept in `directory`; 64 MiB by default.
    ///   - isShared: Whether the cache serves several users (see ``isShared``).
    public convenience init(
        memoryCapacity: Int = 16 * 1_048_576, directory: URL? = nil, diskCapacity: Int = 64 * 1_048_576,
        isShared: Bool = false
    ) {
        self.init(
            memoryCapacity: memoryCapacity, directory: directory, diskCapacity: diskCapacity, isShared: isShared,
            now: Date.init)
    }

    /// Creates a cache whose clock is `now`, for tests of freshness.
    package init(
        memoryCapacity: Int, directory: URL?, diskCapacity: Int = 64 * 1_048_576, isShared: Bool,
        now: @escaping @Sendable () -> Date
    ) {
        self.memoryCapacity = memoryCapacity
        self.directory = directory
        self.diskCapacity = diskCapacity
        self.isShared = isShared
        self.now = now
    }

    /// Forgets every entry, in memory and on disk: the entry files in ``directory`` are removed,
    /// and nothing else of the folder.
    public func removeAll() {
        memory.withLock { $0 = Memory() }
        if let directory {
            disk.sync {
                for file in DiskFiles.entryFiles(in: directory) {
                    try? FileManager.default.removeItem(at: file.url)
                }
                files.withLock { $0 = DiskFiles() }
            }
        }
    }

    // MARK: - Lookup

    /// What the cache can do for a request.
    enum Lookup: Sendable {
        /// Answer with this stored response, whose current age is `age` seconds; nothing is sent.
        case fresh(CachedExchange, age: TimeInterval)
        /// Answer `504 Gateway Timeout`: the request asked for a stored response only
        /// (`only-if-cached`) and none suits; nothing is sent.
        case unsatisfiable
        /// Send the request made conditional on this stored response
        /// (``CachedExchange/conditional(_:)``); a `304` to it refreshes the stored response.
        case revalidate(CachedExchange)
        /// Send the request as it is; its response may be stored.
        case miss
        /// Send the request as it is, and store nothing of it.
        case bypass
    }

    func lookup(_ request: URLRequest) -> Lookup {
        let requestDirectives = CacheControl(request.headerField("Cache-Control"))
        if requestDirectives.has("no-store") { return .bypass }
        // Other methods are sent as they are; storing their response invalidates an unsafe one's URL.
        guard request.httpMethod ?? "GET" == "GET", let key = Self.key(request) else { return .miss }
        if request.headerField("If-None-Match") != nil
            || request.headerField("If-Modified-Since") != nil
        {
            return .miss
        }
        let onlyIfCached = requestDirectives.has("only-if-cached")
        // §4: of several stored responses that suit the request, the most recent by `Date`.
        guard let entry = entries(for: key).filter({ $0.matches(request) }).max(by: { $0.date < $1.date }) else {
            return onlyIfCached ? .unsatisfiable : .miss
        }
        let pragmaNoCache =
            request.headerField("Cache-Control") == nil
            && request.headerField("Pragma")?.lowercased().contains("no-cache") == true
        let now = now()
        if !requestDirectives.has("no-cache"), !pragmaNoCache,
            entry.isFresh(at: now, shared: isShared, requestDirectives: requestDirectives)
        {
            touch(key)
            return .fresh(entry, age: entry.currentAge(at: now))
        }
        // §5.2.1.7: a stored response that suits, or a 504 — nothing is sent.
        if onlyIfCached { return .unsatisfiable }
        guard entry.etag != nil || entry.lastModified != nil else { return .miss }
        return .revalidate(entry)
    }

    // MARK: - Storing

    /// Stores the response to `request`, if RFC 9111 allows; invalidates after an unsafe method.
    func store(
        _ response: HTTPURLResponse, body: Data, for request: URLRequest, requestTime: Date, responseTime: Date
    ) {
        guard let key = Self.key(request) else { return }
        let method = request.httpMethod ?? "GET"
        // §4.4: a non-error answer to any method not known to be safe, whatever it is.
        if !Self.safeMethods.contains(method), (200..<400).contains(response.statusCode) {
            invalidate(key)
            return
        }
        guard method == "GET", body.count <= maximumBodyLength, isStorable(response, for: request) else { return }
        let entry = CachedExchange(
            response: response, body: body, request: request, keyedByCredential: !isShared, requestTime: requestTime,
            responseTime: responseTime)
        keep(entry, under: key)
    }

    /// Whether a body received for `response` to `request` would be stored, so is worth keeping
    /// while it passes: the response may be stored, and the body is no more than
    /// ``maximumBodyLength``.
    func keepsBody(of response: HTTPURLResponse, for request: URLRequest) -> Bool {
        request.httpMethod ?? "GET" == "GET" && isStorable(response, for: request)
    }

    /// The longest body stored: a quarter of the memory capacity.
    var maximumBodyLength: Int { memoryCapacity / 4 }

    /// The stored response refreshed by the `304` `notModified`, as it is now kept and answered;
    /// `nil` when the `304` names a strong validator for another representation than the stored
    /// response's (§4.3.4: it then refreshes nothing).
    ///
    /// Entity-tags are compared weakly, as the server compared the `If-None-Match` it answered
    /// (RFC 9110 §13.1.2): nginx, compressing a body, sends `W/"x"` with it, and then `"x"` in the
    /// `304` to `If-None-Match: W/"x"` — the same representation, which a strong comparison took
    /// for another, sending every such request twice.
    func refresh(
        _ entry: CachedExchange, with notModified: HTTPURLResponse, requestTime: Date, responseTime: Date
    )
        -> CachedExchange?
    {
        if let etag = notModified.value(forHTTPHeaderField: "ETag"), !etag.hasPrefix("W/"),
            CachedExchange.opaqueTag(etag) != entry.etag.map(CachedExchange.opaqueTag)
        {
            return nil
        }
        let refreshed = entry.refreshed(by: notModified, requestTime: requestTime, responseTime: responseTime)
        keep(refreshed, under: entry.url)
        return refreshed
    }

    /// The most responses kept for one URL (variants that differ by what their `Vary` names);
    /// storing another drops the one stored longest ago.
    public static let maximumVariants = 8

    /// What an entry costs besides its body, header fields, URL and `Vary` values, in bytes, when
    /// weighed against ``memoryCapacity``: so that many empty responses (a `204`, say) fill the
    /// cache too.
    public static let entryOverhead = 256

    /// The methods RFC 9110 §9.2.1 defines as safe; an answer to any other invalidates.
    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    private static let storableStatuses: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    private func isStorable(_ response: HTTPURLResponse, for request: URLRequest) -> Bool {
        guard Self.storableStatuses.contains(response.statusCode) else { return false }
        let directives = CacheControl(response.value(forHTTPHeaderField: "Cache-Control"))
        if directives.has("no-store")
            || CacheControl(request.headerField("Cache-Control")).has("no-store")
        {
            return false
        }
        if response.value(forHTTPHeaderField: "Vary")?.split(separator: ",").contains(where: {
            $0.trimmingCharacters(in: .whitespaces) == "*"
        }) == true {
            return false
        }
        if isShared {
            if directives.has("private") { return false }
            if request.headerField("Authorization") != nil,
                !(directives.has("public") || directives.has("s-maxage") || directives.has("must-revalidate"))
            {
                return false
            }
        }
        let hasLifetime =
            directives.seconds("max-age") != nil || (isShared && directives.seconds("s-maxage") != nil)
            || response.value(forHTTPHeaderField: "Expires") != nil
        let hasValidator = ["ETag", "Last-Modified"].contains {
            response.value(forHTTPHeaderField: $0).map(HTTPGrammar.isFieldValue) == true
        }
        return hasLifetime || hasValidator
    }

    // MARK: - Entries, in memory and on disk

    /// `https://host:port/path?query`, without the fragment: the primary cache key, the request's
    /// target URI (§2). A `Host` field of the request's own names its authority (RFC 9110 §7.1), so
    /// virtual hosts behind one address keep their responses apart; a field that names no
    /// authority (a path, user information, a port that is not a number) leaves the request no key,
    /// and out of the cache.
    static func key(_ request: URLRequest) -> String? {
        guard let target = request.targetURL,
            var components = URLComponents(url: target, resolvingAgainstBaseURL: true)
        else { return nil }
        components.fragment = nil
        return components.string
    }

    private func entries(for key: String) -> [CachedExchange] {
        if let found = memory.withLock({ $0.entries[key] }) { return found }
        guard let file = file(for: key), let data = try? Data(contentsOf: file),
            let stored = try? JSONDecoder().decode([CachedExchange].self, from: data),
            stored.first?.url == key
        else { return [] }
        // An entry not keyed by a credential (written by a shared cache, or by a Strata that kept
        // responses by URL alone) would answer every user of a private cache: it is not read.
        let usable = isShared ? stored : stored.filter { $0.varyValues.keys.contains("authorization") }
        keepInMemory(usable, under: key)
        return usable
    }

    /// Keeps `entry`, replacing the variant with the same `Vary` values.
    private func keep(_ entry: CachedExchange, under key: String) {
        var variants = entries(for: key)
        variants.removeAll { $0.varyValues == entry.varyValues }
        variants.insert(entry, at: 0)
        // A response that varies by a field each request sets differently (a request id, a
        // rotating cookie) would otherwise add a variant per request, each looked at on every
        // lookup of its URL.
        variants.removeSubrange(min(variants.count, Self.maximumVariants)...)
        keepInMemory(variants, under: key)
        guard let file = file(for: key) else { return }
        // A variant kept for a credential (a response that varies by `Cookie`, say) stays in
        // memory: on disk its key would be the credential, in a plain file.
        let written = variants.filter { !$0.isKeptForACredential }
        disk.async { [self] in
            guard !written.isEmpty, let data = try? JSONEncoder().encode(written) else {
                return removeFile(file)
            }
            try? FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard (try? data.write(to: file, options: .atomic)) != nil else { return removeFile(file) }
            wrote(file, size: data.count)
        }
    }

    /// Counts `file`, just written, and removes the files written longest ago while the folder
    /// holds more than ``diskCapacity``. On `disk` only.
    private func wrote(_ file: URL, size: Int) {
        let removed = files.withLock { files -> [String] in
            var known = files ?? DiskFiles(in: file.deletingLastPathComponent())
            known.set(file.lastPathComponent, size: size)
            let removed = known.trim(to: max(0, diskCapacity))
            files = known
            return removed
        }
        for name in removed {
            try? FileManager.default.removeItem(at: file.deletingLastPathComponent().appendingPathComponent(name))
        }
    }

    /// Removes `file` and forgets it. On `disk` only.
    private func removeFile(_ file: URL) {
        try? FileManager.default.removeItem(at: file)
        files.withLock { $0?.set(file.lastPathComponent, size: nil) }
    }

    private func keepInMemory(_ variants: [CachedExchange], under key: String) {
        memory.withLock { memory in
            memory.size -= memory.entries[key]?.reduce(0) { $0 + $1.cost } ?? 0
            memory.entries[key] = variants
            memory.size += variants.reduce(0) { $0 + $1.cost }
            memory.order.use(key)
            while memory.size > memoryCapacity, let oldest = memory.order.removeOldest() {
                memory.size -= memory.entries.removeValue(forKey: oldest)?.reduce(0) { $0 + $1.cost } ?? 0
            }
        }
    }

    private func touch(_ key: String) {
        memory.withLock { memory in
            guard memory.entries[key] != nil else { return }
            memory.order.use(key)
        }
    }

    private func invalidate(_ key: String) {
        memory.withLock { memory in
            memory.size -= memory.entries.removeValue(forKey: key)?.reduce(0) { $0 + $1.cost } ?? 0
            memory.order.forget(key)
        }
        if let file = file(for: key) {
            disk.async { [self] in removeFile(file) }
        }
    }

    /// Waits until every entry stored so far is written to ``directory`` (files are written in the
    /// background, in order).
    public func flush() {
        disk.sync {}
    }

    /// The entry's file: named by a 64-bit FNV-1a hash of its key (the key inside is checked on read).
    private func file(for key: String) -> URL? {
        guard let directory else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return directory.appendingPathComponent(String(hash, radix: 16) + ".json")
    }
}

/// Keys in the order they were last used, the one used longest ago first. Using a key, forgetting
/// it and taking the oldest cost O(1) amortized — a list of uses whose superseded ones are skipped,
/// and dropped once they are half of it — where a list of keys searched on every use cost a walk
/// of every key the cache holds.
struct RecencyOrder<Key: Hashable & Sendable>: Sendable {
    private var uses: [(key: Key, use: Int)] = []
    private var head = 0
    private var latest: [Key: Int] = [:]
    private var clock = 0

    /// Makes `key` the one used last.
    mutating func use(_ key: Key) {
        clock += 1
        latest[key] = clock
        uses.append((key, clock))
        compact()
    }

    /// Takes `key` out of the order.
    mutating func forget(_ key: Key) {
        latest[key] = nil
        compact()
    }

    /// Takes out and returns the key used longest ago; `nil` when there is none.
    mutating func removeOldest() -> Key? {
        while head < uses.count {
            let (key, use) = uses[head]
            head += 1
            if latest[key] == use {
                latest[key] = nil
                compact()
                return key
            }
        }
        return nil
    }

    /// Drops the superseded uses once they are more than half of the list.
    private mutating func compact() {
        guard uses.count > 32, uses.count > 2 * latest.count else { return }
        uses = uses[head...].filter { latest[$0.key] == $0.use }
        head = 0
    }
}

/// The entry files of a cache's folder, with their sizes, the one written longest ago first.
private struct DiskFiles: Sendable {
    private var sizes: [String: Int] = [:]
    private var order = RecencyOrder<String>()
    private var total = 0

    init() {}

    /// The entry files `directory` holds, the one modified longest ago first.
    init(in directory: URL) {
        for file in Self.entryFiles(in: directory).sorted(by: { $0.modified < $1.modified }) {
            set(file.url.lastPathComponent, size: file.size)
        }
    }

    /// The entry files of `directory`: regular files named as ``HTTPCache`` names them, a hash in
    /// hexadecimal and `.json`, so that nothing else in the folder — a file or a folder of the
    /// app's — is ever counted or removed.
    static func entryFiles(in directory: URL) -> [(url: URL, size: Int, modified: Date)] {
        let keys: Set<URLResourceKey> = [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey]
        let found =
            (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: Array(keys))) ?? []
        return found.compactMap { url in
            guard isEntryFile(url.lastPathComponent), let values = try? url.resourceValues(forKeys: keys),
                values.isRegularFile == true
            else { return nil }
            return (url, values.fileSize ?? 0, values.contentModificationDate ?? .distantPast)
        }
    }

    /// Whether `name` is one ``HTTPCache`` gives an entry's file: 1 to 16 hexadecimal digits, `.json`.
    static func isEntryFile(_ name: String) -> Bool {
        guard name.hasSuffix(".json") else { return false }
        let hash = name.utf8.dropLast(5)
        return (1...16).contains(hash.count)
            && hash.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Counts file `name` at `size` bytes as written last; `nil` forgets it.
    mutating func set(_ name: String, size: Int?) {
        if let old = sizes.removeValue(forKey: name) {
            total -= old
            order.forget(name)
        }
        guard let size else { return }
        sizes[name] = size
        order.use(name)
        total += size
    }

    /// Forgets the files written longest ago until they come to at most `capacity` bytes.
    /// - Returns: The names of the files to remove.
    mutating func trim(to capacity: Int) -> [String] {
        var removed: [String] = []
        while total > capacity, let name = order.removeOldest() {
            total -= sizes.removeValue(forKey: name) ?? 0
            removed.append(name)
        }
        return removed
    }
}

/// One stored response with what its freshness and matching depend on.
struct CachedExchange: Codable, Sendable {
    let url: String
    let statusCode: Int
    let headers: [String: String]
    let body: Data
    /// The request's values of the headers the response's `Vary` names (lowercased names); `nil`
    /// for one the request did not have, which matches only a request without it too (§4.1).
    let varyValues: [String: String?]
    let requestTime: Date
    let responseTime: Date
    /// The `Date` header's time, or the response time without one; parsed once, when stored.
    let date: Date
    /// `Expires` − `Date`: `nil` without `Expires`, 0 for an invalid one (a date in the past).
    let expiresLifetime: TimeInterval?

    /// What keeping this in memory is weighed at: its body, header fields, URL and `Vary` values,
    /// and ``HTTPCache/entryOverhead``.
    var cost: Int {
        let fields = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        let vary = varyValues.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.utf8.count ?? 0) }
        return body.count + fields + vary + url.utf8.count + HTTPCache.entryOverhead
    }

    /// The exchange of `response` to `request`, as stored; `keyedByCredential` (a private cache's)
    /// makes it answer only requests with the request's `Authorization`, or with none if it had none.
    init(
        response: HTTPURLResponse, body: Data, request: URLRequest, keyedByCredential: Bool, requestTime: Date,
        responseTime: Date
    ) {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name] = value
            }
        }
        headers = Self.storable(headers)
        self.init(
            url: HTTPCache.key(request) ?? "", statusCode: response.statusCode, headers: headers, body: body,
            varyValues: Self.varyValues(
                named: headers.first { $0.key.lowercased() == "vary" }?.value, in: request,
                keyedByCredential: keyedByCredential),
            requestTime: requestTime, responseTime: responseTime)
    }

    private init(
        url: String, statusCode: Int, headers: [String: String], body: Data, varyValues: [String: String?],
        requestTime: Date, responseTime: Date
    ) {
        self.url = url
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.varyValues = varyValues
        self.requestTime = requestTime
        self.responseTime = responseTime
        func field(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        let date = field("Date").flatMap(HTTPDate.parse) ?? responseTime
        self.date = date
        expiresLifetime = field("Expires").map { HTTPDate.parse($0)?.timeIntervalSince(date) ?? 0 }
    }

    /// The request's values of the fields `vary` names, and with `keyedByCredential` of its
    /// `Authorization` (or none) as if `vary` named it too.
    ///
    /// A private cache may reuse a response to a request with `Authorization` (RFC 9111 §3.5 binds
    /// shared caches only), yet it is private to an app, not to a user: keyed by its URL alone, the
    /// response to one user's request would answer the next user signed in on the same manager, or
    /// a request sent with no credential at all.
    private static func varyValues(
        named vary: String?, in request: URLRequest, keyedByCredential: Bool
    ) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in (vary ?? "").split(separator: ",") {
            let name = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty else { continue }
            values[name] = .some(request.headerField(name))
        }
        if keyedByCredential {
            values["authorization"] = .some(request.headerField("Authorization"))
        }
        return values
    }

    /// `headers` without what a cache must not keep (§3.1): the fields of the proxy the request went
    /// through, and the connection's own — `Connection` and the fields it names.
    private static func storable(_ headers: [String: String]) -> [String: String] {
        let connection = headers.first { $0.key.lowercased() == "connection" }?.value ?? ""
        let dropped = Set(
            ["proxy-authenticate", "proxy-authentication-info", "proxy-authorization", "connection", "keep-alive"]
                + connection.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        return headers.filter { !dropped.contains($0.key.lowercased()) }
    }

    func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    var etag: String? { validator("ETag") }
    var lastModified: String? { validator("Last-Modified") }

    /// An entity-tag without its weakness indicator (`W/`), for a weak comparison (RFC 9110 §8.8.3.2).
    static func opaqueTag(_ etag: String) -> Substring {
        let tag = etag.trimmingCharacters(in: .whitespaces)
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }

    /// The stored field `name` as a validator: only a value that may go back in a request's field
    /// as it is. One holding a control character (libcurl passes them on from a server) would reach
    /// the wire past the check every field of a request passes; it validates nothing.
    private func validator(_ name: String) -> String? {
        header(name).flatMap { HTTPGrammar.isFieldValue($0) ? $0 : nil }
    }

    /// Whether the entry answers only requests with a given credential: it is keyed by a field
    /// ``/StrataCore/Redaction`` always hides (`Cookie`, `Authorization`), which its request
    /// carried.
    var isKeptForACredential: Bool {
        varyValues.contains { name, value in value != nil && Redaction.credentialHeaderNames.contains(name) }
    }

    /// `request` made conditional on this response: sent with its validators (§4.3.1).
    func conditional(_ request: URLRequest) -> URLRequest {
        var conditional = request
        let validators: [(String, String?)] = [("If-None-Match", etag), ("If-Modified-Since", lastModified)]
        conditional.setHeaderFields(validators.filter { $0.1 != nil })
        return conditional
    }

    /// Whether `request` asks for the same values of the `Vary` headers.
    func matches(_ request: URLRequest) -> Bool {
        varyValues.allSatisfy { name, value in request.headerField(name) == value }
    }

    /// Whether the entry may answer a request with `requestDirectives` at `now` without
    /// validation (RFC 9111 §4.2): it is fresh, not `no-cache`, no older than the request's
    /// `max-age`, and fresh for the request's `min-fresh` longer (§5.2.1).
    func isFresh(at now: Date, shared: Bool, requestDirectives: CacheControl) -> Bool {
        let directives = CacheControl(header("Cache-Control"))
        if directives.has("no-cache") { return false }
        let age = currentAge(at: now)
        if let maximum = requestDirectives.seconds("max-age"), maximum == 0 || age > maximum { return false }
        let minimumFresh = requestDirectives.seconds("min-fresh") ?? 0
        return age + minimumFresh < freshnessLifetime(shared: shared, directives: directives)
    }

    /// §4.2.1: `s-maxage` (shared caches), `max-age`, then `Expires` − `Date`. No heuristics.
    private func freshnessLifetime(shared: Bool, directives: CacheControl) -> TimeInterval {
        if shared, let seconds = directives.seconds("s-maxage") { return seconds }
        if let seconds = directives.seconds("max-age") { return seconds }
        return expiresLifetime ?? 0
    }

    /// §4.2.3: the corrected initial age plus the time resident in this cache.
    func currentAge(at now: Date) -> TimeInterval {
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let ageValue = header("Age").flatMap(Self.ageValue) ?? 0
        let correctedAge = ageValue + responseTime.timeIntervalSince(requestTime)
        return max(apparentAge, correctedAge) + now.timeIntervalSince(responseTime)
    }

    /// An `Age` field's value (§5.1): the first member of a list, a non-negative integer of
    /// seconds, at most 2³¹; `nil` for anything else (a sign, a fraction, text), which is ignored.
    static func ageValue(_ field: String) -> TimeInterval? {
        let first = field.split(separator: ",", omittingEmptySubsequences: false).first ?? ""
        return DeltaSeconds.parse(first.trimmingCharacters(in: .whitespaces))
    }

    /// §4.3.4 and §3.2: the stored headers updated with those of the `304` (but for what a cache
    /// does not keep, and `Content-Length`), and its times. A stored `Age` goes unless the `304`
    /// brings one: the refreshed response's age counts from the `304`.
    func refreshed(by notModified: HTTPURLResponse, requestTime: Date, responseTime: Date) -> CachedExchange {
        var headers = self.headers.filter { $0.key.lowercased() != "age" }
        var fields: [String: String] = [:]
        for (name, value) in notModified.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                fields[name] = value
            }
        }
        var kept = ["content-length", "content-encoding", "transfer-encoding"]
        // The stored tag names the stored body (`W/"x"` for a compressed one): a `304` naming the
        // same tag otherwise does not replace it.
        if let stored = etag, let named = notModified.value(forHTTPHeaderField: "ETag"),
            Self.opaqueTag(named) == Self.opaqueTag(stored)
        {
            kept.append("etag")
        }
        for (name, value) in Self.storable(fields) where !kept.contains(name.lowercased()) {
            headers = headers.filter { $0.key.caseInsensitiveCompare(name) != .orderedSame }
            headers[name] = value
        }
        return CachedExchange(
            url: url, statusCode: statusCode, headers: headers, body: body, varyValues: varyValues,
            requestTime: requestTime, responseTime: responseTime)
    }

    /// The stored response, as the transport would have reported it; with `age`, answered without
    /// validation, so with an `Age` field of that many whole seconds replacing any stored one (§4).
    func response(for url: URL?, age: TimeInterval? = nil) -> HTTPURLResponse? {
        var headers = headers
        if let age {
            headers = headers.filter { $0.key.lowercased() != "age" }
            // 2³¹ for an age it cannot represent (§5.1).
            headers["Age"] = String(age < Double(DeltaSeconds.largest) ? Int(max(0, age)) : DeltaSeconds.largest)
        }
        return HTTPURLResponse(
            url: url ?? URL(string: self.url) ?? URL(fileURLWithPath: "/"), statusCode: statusCode,
            httpVersion: "HTTP/1.1", headerFields: headers)
    }
}

/// The directives of a `Cache-Control` field: `name` or `name=value`, comma-separated.
struct CacheControl {
    private var directives: [String: String] = [:]

    init(_ field: String?) {
        for part in (field ?? "").split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard let name = pieces.first?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else {
                continue
            }
            let value = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
            directives[name] = value.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
    }

    func has(_ name: String) -> Bool {
        directives[name] != nil
    }

    /// The delta-seconds of `name`; an invalid value counts as 0 (RFC 9111 §1.2.2).
    func seconds(_ name: String) -> TimeInterval? {
        guard let value = directives[name] else { return nil }
        return DeltaSeconds.parse(value) ?? 0
    }
}

/// A number of seconds as HTTP writes one (`1*DIGIT`: RFC 9111 §1.2.2, and a `Retry-After`'s
/// delay-seconds, RFC 9110 §10.2.3).
enum DeltaSeconds {
    /// The most seconds a value stands for: 2³¹, which one too large to hold is taken for.
    static let largest = 2_147_483_648

    /// `text` as seconds: digits alone, at most ``largest``; `nil` for anything else (a sign, a
    /// fraction, text, nothing).
    static func parse(_ text: String) -> TimeInterval? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return TimeInterval(min(Int(text) ?? largest, largest))
    }
}

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate, and the obsolete RFC 850 and asctime forms.
enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ]

    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) {
                return date
            }
        }
        return nil
    }
}
