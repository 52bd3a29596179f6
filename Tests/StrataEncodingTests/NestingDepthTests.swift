import Foundation
import StrataCore
import StrataEncoding
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Input nested 10,000 and 100,000 levels deep, encoded on a thread with a 512 KiB stack: every
/// encoding refuses it with a typed error instead of recursing into it, and what has no limit
/// walks it without recursion.
///
/// The deep values live for the whole run: releasing one is itself recursive (an indirect enum, a
/// chain of objects), which is the test's own doing, not Strata's.
@Suite struct NestingDepthTests {
    static let smallStack = 512 * 1024
    static let depths = [10_000, 100_000]

    /// `[[[…[1]…]]]`, `depth` arrays deep, built once per depth.
    static let deepParameters: [Int: ParameterValue] = Dictionary(
        uniqueKeysWithValues: depths.map { depth in
            var value: ParameterValue = 1
            for level in 0..<depth {
                value = level.isMultiple(of: 2) ? [value] : ["level": value]
            }
            return (depth, value)
        }
    )

    /// Objects nested `depth` deep through synthesized keyed containers.
    static let deepObjects: [Int: Link] = Dictionary(
        uniqueKeysWithValues: depths.map { depth in
            (depth, (0..<depth).reduce(Link(next: nil)) { inner, _ in Link(next: inner) })
        }
    )

    /// Values wrapped `depth` times in single-value containers: recursion without any container.
    static let deepWrappers: [Int: Wrapper] = Dictionary(
        uniqueKeysWithValues: depths.map { depth in
            (depth, (0..<depth).reduce(Wrapper.end) { inner, _ in .wrap(inner) })
        }
    )

    final class Link: Encodable, Sendable {
        let next: Link?
        init(next: Link?) { self.next = next }
    }

    indirect enum Wrapper: Encodable, Sendable {
        case end
        case wrap(Wrapper)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .end: try container.encode("end")
            case .wrap(let inner): try container.encode(inner)
            }
        }
    }

    /// Every parameter encoding, by name.
    static let encodings: [(String, any ParameterEncoding)] = [
        ("URL query", URLEncoding.queryString),
        ("form body", URLEncoding.httpBody),
        ("JSON", JSONEncoding.default),
        ("XML document", XMLEncoding(rootElement: "root")),
        ("SOAP", XMLEncoding.soap(.v1_2, operation: "Call")),
        ("property list", XMLEncoding.propertyList),
        ("multipart", MultipartEncoding()),
    ]

    static let request: URLRequest = {
        var request = URLRequest(url: URL(string: "https://api.example.com/items") ?? URL(fileURLWithPath: "/"))
        request.httpMethod = "POST"
        return request
    }()

    /// The error encoding `input` with `encoding` throws on a small stack, if any.
    private func error(
        encoding: any ParameterEncoding, _ input: @escaping @Sendable (any ParameterEncoding) throws -> URLRequest
    ) async -> ParameterEncodingError? {
        await runOnThread(stackSize: Self.smallStack) {
            do {
                _ = try input(encoding)
                return nil
            } catch {
                return error as? ParameterEncodingError
            }
        }
    }

    @Test(arguments: depths)
    func everyEncodingRefusesParametersNestedTooDeep(depth: Int) async throws {
        let value = try #require(Self.deepParameters[depth])
        for (name, encoding) in Self.encodings {
            let error = await error(encoding: encoding) { try $0.encode(Self.request, with: ["deep": value]) }
            #expect(error == .nestingTooDeep(maximum: ParameterValue.defaultMaximumDepth), "\(name)")
        }
    }

    @Test(arguments: depths)
    func everyEncodingRefusesEncodablesNestedTooDeep(depth: Int) async throws {
        let objects = try #require(Self.deepObjects[depth])
        let wrappers = try #require(Self.deepWrappers[depth])
        for (name, encoding) in Self.encodings {
            let chain = await error(encoding: encoding) {
                try $0.encode(Self.request, withEncodable: ["deep": objects])
            }
            #expect(chain == .nestingTooDeep(maximum: ParameterValue.defaultMaximumDepth), "\(name), objects")
            let wrapped = await error(encoding: encoding) {
                try $0.encode(Self.request, withEncodable: ["deep": wrappers])
            }
            #expect(wrapped == .nestingTooDeep(maximum: ParameterValue.defaultMaximumDepth), "\(name), wrappers")
        }
    }

    /// `levels` levels of arrays and objects: the parameter list itself and `levels - 1` more.
    private func parameters(levels: Int) -> [String: ParameterValue] {
        var value: ParameterValue = "leaf"
        for _ in 0..<(levels - 1) { value = [value] }
        return ["value": value]
    }

    @Test func theMaximumDepthIsAllowedAndOneMoreIsNot() throws {
        let configured: [(String, any ParameterEncoding)] = [
            ("URL query", URLEncoding(destination: .queryString, maximumDepth: 4)),
            ("JSON", JSONEncoding(maximumDepth: 4)),
            ("XML", XMLEncoding(rootElement: "root", encoder: XMLEncoder(maximumDepth: 4))),
            ("property list", XMLEncoding(format: .propertyList, encoder: XMLEncoder(maximumDepth: 4))),
            ("multipart", MultipartEncoding(maximumDepth: 4)),
        ]
        for (name, encoding) in configured {
            _ = try encoding.encode(Self.request, with: parameters(levels: 4))
            #expect(throws: ParameterEncodingError.nestingTooDeep(maximum: 4), "\(name)") {
                try encoding.encode(Self.request, with: parameters(levels: 5))
            }
            // The same values as an Encodable are counted the same way.
            _ = try encoding.encode(Self.request, withEncodable: parameters(levels: 4))
            #expect(throws: ParameterEncodingError.nestingTooDeep(maximum: 4), "\(name), Encodable") {
                try encoding.encode(Self.request, withEncodable: parameters(levels: 5))
            }
        }
    }

    @Test func theParameterValueEncoderCountsContainersAndWrappers() throws {
        struct Pair: Encodable { let inner: [Int] }
        let encoder = ParameterValueEncoder(maximumDepth: 2)
        _ = try encoder.encode(Pair(inner: [1]))
        #expect(throws: ParameterEncodingError.nestingTooDeep(maximum: 1)) {
            try ParameterValueEncoder(maximumDepth: 1).encode(Pair(inner: [1]))
        }
        #expect(throws: ParameterEncodingError.nestingTooDeep(maximum: 3)) {
            try ParameterValueEncoder(maximumDepth: 3).encode(Wrapper.wrap(.wrap(.wrap(.wrap(.end)))))
        }
    }

    /// In linear time too: the coding path stops growing at the limit (copying it at every level
    /// took 2 s for 10,000 levels, and would take minutes for 100,000).
    @Test(arguments: depths)
    func aNestedContainerPastTheLimitFailsEvenThoughItCannotThrow(levels: Int) throws {
        struct Loop: Encodable {
            let levels: Int
            func encode(to encoder: any Encoder) throws {
                var container = encoder.unkeyedContainer()
                for _ in 0..<levels {
                    container = container.nestedUnkeyedContainer()
                }
                try container.encode(1)
            }
        }
        #expect(throws: ParameterEncodingError.nestingTooDeep(maximum: 100)) {
            try ParameterValueEncoder().encode(Loop(levels: levels))
        }
        #expect(throws: ParameterEncodingError.nestingTooDeep(maximum: 100)) {
            try JSONEncoding.default.encode(Self.request, withEncodable: ["loop": Loop(levels: levels)])
        }
    }

    @Test(arguments: depths)
    func multipartFormDataWalksAValueOfAnyDepthWithoutRecursion(depth: Int) async throws {
        let value = try #require(Self.deepParameters[depth])
        let parts = await runOnThread(stackSize: Self.smallStack) {
            var form = MultipartFormData(boundary: "b")
            form.append(value, name: "deep")
            return form.parts.map(\.name.count)
        }
        #expect(parts.count == 1)
        #expect((parts.first ?? 0) > depth)
    }

    static let deepTree: XMLTree = (0..<100_000).reduce(XMLTree("leaf", text: "x")) { inner, _ in
        XMLTree("e", children: [.element(inner)])
    }

    @Test func theXMLWriterWritesATreeOfAnyDepthWithoutRecursion() async throws {
        let written = await runOnThread(stackSize: Self.smallStack) {
            (try? XMLWriter(includesDeclaration: false).write(Self.deepTree))?.utf8.count
        }
        #expect(written == 100_000 * "<e></e>".count + "<leaf>x</leaf>".count)
    }

    @Test(arguments: depths)
    func theXMLDecoderRefusesADocumentNestedTooDeepWhileReadingIt(depth: Int) async throws {
        let document = Data((String(repeating: "<e>", count: depth) + String(repeating: "</e>", count: depth)).utf8)
        let error = await runOnThread(stackSize: Self.smallStack) { () -> XMLError? in
            do {
                _ = try XMLDecoder.parse(document)
                return nil
            } catch {
                return error as? XMLError
            }
        }
        #expect(error == .nestingTooDeep(maximum: ParameterValue.defaultMaximumDepth))
    }

    @Test func theXMLDecodersMaximumDepthCountsTheRoot() throws {
        func document(_ depth: Int) -> Data {
            Data((String(repeating: "<e>", count: depth) + String(repeating: "</e>", count: depth)).utf8)
        }
        _ = try XMLDecoder.parse(document(100))
        #expect(throws: XMLError.nestingTooDeep(maximum: 100)) { try XMLDecoder.parse(document(101)) }
        struct Root: Decodable { let e: String? }
        #expect(throws: XMLError.nestingTooDeep(maximum: 2)) {
            try XMLDecoder(maximumDepth: 2).decode(Root.self, from: document(3))
        }
    }

    @Test func aDepthCheckOfAParameterValueNeedsNoRecursion() async throws {
        let value = try #require(Self.deepParameters[100_000])
        let results = await runOnThread(stackSize: Self.smallStack) {
            (value.nests(deeperThan: 99_999), value.nests(deeperThan: 100_000))
        }
        #expect(results == (true, false))
        #expect(ParameterValue.string("x").nests(deeperThan: 0) == false)
        #expect(ParameterValue.array([]).nests(deeperThan: 0) == true)
        #expect(ParameterValue.object(["a": [1]]).nests(deeperThan: 1) == true)
        #expect(ParameterValue.object(["a": [1]]).nests(deeperThan: 2) == false)
    }
}
