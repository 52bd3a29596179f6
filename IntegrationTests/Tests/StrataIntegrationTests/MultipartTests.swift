import Foundation
import Strata
import StrataTestServer
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Strata's multipart bodies, parsed by an independent parser (MultipartKit, in the server).
@Suite struct MultipartTests {
    @Test func textPartsOfEveryKindBinaryDataAndANonASCIIFileNameArriveIntact() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-\(UUID().uuidString)-résumé 📄.pdf")
        let fileBytes = Data((0..<3_000).map { UInt8($0 % 256) })
        try fileBytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartFormData()
        form.append(Data([0, 255, 13, 10, 45, 45]), name: "binary", fileName: "raw.bin")
        try form.append(fileURL: file, name: "document", fileName: "résumé 📄.pdf")
        try await Harness.with { (harness) async throws in
            let echo = try await harness.transfer.request(
                Endpoint<MultipartEcho>(
                    path: "multipart",
                    method: .post,
                    bodyParameters: [
                        "text": "Grüße, 世界", "int": 42, "double": -0.5, "bool": true, "null": nil, "list": ["a", 1],
                        "nested": ["k": "v"], "date": .date(Date(timeIntervalSince1970: 0)),
                    ],
                    bodyEncoding: MultipartEncoding(form: form)
                )
            )
            let fields = Dictionary(
                echo.parts.filter { $0.filename == nil }.map { ($0.name ?? "", $0.text ?? "") },
                uniquingKeysWith: { $0 + "|" + $1 })
            #expect(
                fields == [
                    "text": "Grüße, 世界", "int": "42", "double": "-0.5", "bool": "true", "null": "", "list[]": "a|1",
                    "nested[k]": "v", "date": "1970-01-01T00:00:00Z",
                ]
            )
            let binary = try #require(echo.parts.first { $0.name == "binary" })
            #expect(binary.base64 == Data([0, 255, 13, 10, 45, 45]).base64EncodedString())
            #expect(binary.contentType == "application/octet-stream")
            let document = try #require(echo.parts.first { $0.name == "document" })
            #expect(document.filename == "résumé 📄.pdf")
            #expect(document.contentType == "application/pdf")
            #expect(document.base64 == fileBytes.base64EncodedString())
        }
    }

    /// Three times a 256 KiB threshold: large enough for several progress reports, small enough
    /// that MultipartKit's parser, which reads a debug-built `ByteBufferView` byte by byte at about
    /// a microsecond each, answers well inside the harness's 10 s timeout.
    @Test func aBodyAboveTheThresholdIsUploadedFromATemporaryFileWithProgressThenDeleted() async throws {
        let threshold = 262_144
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let payload = Data(TestReply.generatedBody(size: 3 * threshold))
        var form = MultipartFormData()
        form.append(payload, name: "payload", fileName: "payload.bin")
        let updates = CompletionRecorder<[Int64]>()
        try await Harness.with { (harness) async throws in
            let echo = try await harness.transfer.request(
                Endpoint<MultipartEcho>(
                    path: "multipart",
                    method: .post,
                    bodyEncoding: MultipartEncoding(
                        form: form, memoryThreshold: UInt64(threshold), temporaryDirectory: directory),
                    options: RequestOptions(uploadProgress: { progress in
                        updates.record([progress.completedUnitCount, progress.totalUnitCount])
                    })
                )
            )
            let part = try #require(echo.parts.first)
            #expect(part.size == payload.count)
            var expected = CRC32()
            expected.update(payload)
            #expect(part.crc32 == expected.value)
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        let reported = updates.values
        #expect(reported.count >= 2)
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0[0] <= $1[0] })
        let last = try #require(reported.last)
        #expect(last[0] == last[1])
        #expect(last[1] > Int64(payload.count))
    }

    @Test func randomUnicodeFieldsRoundTripThroughAnIndependentParser() async throws {
        var generator = SystemRandomNumberGenerator()
        let pools: [[Character]] = [Array("abcXYZ019 -_."), Array("\"\\;=&%+"), Array("éüßñжщ漢字かな"), Array("🚀👩‍💻")]
        func text(_ length: ClosedRange<Int>) -> String {
            String(
                (0..<Int.random(in: length, using: &generator)).map { _ in
                    pools.randomElement(using: &generator)?.randomElement(using: &generator) ?? "a"
                })
        }
        try await Harness.with { (harness) async throws in
            for _ in 0..<40 {
                var fields: [String: ParameterValue] = [:]
                for _ in 0..<Int.random(in: 1...5, using: &generator) {
                    let name = text(1...8).replacingOccurrences(of: "[", with: "(").replacingOccurrences(
                        of: "%", with: "_")
                    fields[name] = .string(text(0...20))
                }
                let echo = try await harness.transfer.request(
                    Endpoint<MultipartEcho>(
                        path: "multipart", method: .post, bodyParameters: fields, bodyEncoding: MultipartEncoding())
                )
                let received = Dictionary(
                    echo.parts.map { ($0.name ?? "", ParameterValue.string($0.text ?? "")) }, uniquingKeysWith: { $1 })
                // Names carry `"` as %22 (HTML form encoding); values are bytes and arrive as sent.
                let expected = Dictionary(
                    fields.map { ($0.key.replacingOccurrences(of: "\"", with: "%22"), $0.value) },
                    uniquingKeysWith: { $1 })
                #expect(received == expected)
            }
        }
    }
}

/// XML bodies written by Strata, echoed by the server, and decoded from the reply.
@Suite struct XMLRoundTripTests {
    struct Note: Codable, Equatable, Sendable {
        enum CodingKeys: String, CodingKey { case lang = "@lang", to, body, tags }
        let lang: String
        let to: String
        let body: String
        let tags: [String]
    }

    @Test func anXMLBodyIsEchoedAndDecodedFromTheReply() async throws {
        let note = Note(lang: "nb", to: "Åse & Bo", body: "<hei> \"på\" deg", tags: ["a", "b"])
        try await Harness.with { (harness) async throws in
            let echoed = try await harness.transfer.request(
                Endpoint<Note>(
                    path: "xml",
                    method: .post,
                    bodyParametersEncodable: note,
                    bodyEncoding: XMLEncoding(rootElement: "note"),
                    responseDecoder: XMLResponseDecoder()
                )
            )
            #expect(echoed == note)
        }
    }

    @Test func aSOAPEnvelopeIsEchoedAndItsBodyUnwrapped() async throws {
        struct GetQuote: Codable, Equatable, Sendable { let symbol: String }
        try await Harness.with { (harness) async throws in
            let echoed = try await harness.transfer.request(
                Endpoint<GetQuote>(
                    path: "xml",
                    method: .post,
                    bodyParametersEncodable: GetQuote(symbol: "STRT"),
                    bodyEncoding: XMLEncoding.soap(.v1_2, operation: "GetQuote"),
                    responseDecoder: XMLResponseDecoder(unwrapsSOAPBody: true)
                )
            )
            #expect(echoed == GetQuote(symbol: "STRT"))
        }
    }
}
