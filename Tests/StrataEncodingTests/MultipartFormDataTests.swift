import Foundation
import StrataCore
import StrataEncoding
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct MultipartFormDataTests {
    private func temporaryFile(_ contents: Data, name: String = "strata-\(UUID().uuidString).png") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try contents.write(to: url)
        return url
    }

    @Test func textFieldsOfEveryKindAreWrittenNoneDropped() throws {
        var form = MultipartFormData(boundary: "B")
        form.append([
            "s": "text", "i": 42, "d": 2.5, "b": false, "n": nil, "list": [1, "two"], "obj": ["k": true],
            "at": .date(Date(timeIntervalSince1970: 0)),
        ])
        let body = String(decoding: try form.encoded(), as: UTF8.self)
        let fields = [
            ("at", "1970-01-01T00:00:00Z"), ("b", "false"), ("d", "2.5"), ("i", "42"), ("list[]", "1"),
            ("list[]", "two"),
            ("n", ""), ("obj[k]", "true"), ("s", "text"),
        ]
        let expected =
            fields.map { "--B\r\nContent-Disposition: form-data; name=\"\($0.0)\"\r\n\r\n\($0.1)\r\n" }.joined()
            + "--B--\r\n"
        #expect(body == expected)
    }

    @Test func dataAndFilePartsCarryFileNameAndMIMEType() throws {
        let file = try temporaryFile(Data([1, 2, 3]), name: "strata-\(UUID().uuidString).PNG")
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartFormData(boundary: "B")
        form.append(Data("x".utf8), name: "note", fileName: "note.txt")
        try form.append(fileURL: file, name: "image", fileName: "photo.PNG")
        form.append(Data([0]), name: "blob", fileName: "blob.unknownext")
        let body = try form.encoded()
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"note\"; filename=\"note.txt\"\r\nContent-Type: text/plain\r\n\r\nx\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"image\"; filename=\"photo.PNG\"\r\nContent-Type: image/png\r\n\r\n\u{1}\u{2}\u{3}\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.unknownext\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n\u{0}\r\n--B--\r\n"
        #expect(body == Data(expected.utf8))
        #expect(form.contentLength == UInt64(body.count))
    }

    @Test func quotesCarriageReturnsAndLineFeedsInNamesAreEscaped() throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data(), name: "a\"b\r\nc", fileName: "évil\"\r\n.txt")
        let body = String(decoding: try form.encoded(), as: UTF8.self)
        #expect(body.contains(#"name="a%22b%0D%0Ac"; filename="évil%22%0D%0A.txt""#))
    }

    /// A MIME type is written into a part's header: one holding CR or LF would end the header and
    /// start one of the caller's choosing, so it is refused, as is anything but `type/subtype`.
    @Test(arguments: [
        "text/plain\r\nX-Injected: 1", "text/plain\nX: 1", "text/plain\u{0}", "text", "/plain", "text/", "te xt/plain",
        "",
    ])
    func aMIMETypeThatIsNotAMediaTypeIsRefused(type: String) {
        var form = MultipartFormData(boundary: "B")
        form.append(Data("x".utf8), name: "file", fileName: "a.txt", mimeType: type)
        #expect(throws: MultipartError.invalidMIMEType(type)) { try form.encoded() }
        #expect(throws: ParameterEncodingError.multipart(.invalidMIMEType(type))) {
            try MultipartEncoding(form: form).encode(URLRequest(url: URL(fileURLWithPath: "/")), with: [:])
        }
    }

    @Test func mediaTypesWithParametersAreAccepted() throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data("x".utf8), name: "file", fileName: "a.txt", mimeType: "text/plain; charset=utf-8")
        form.append(Data("{}".utf8), name: "doc", fileName: "a.json", mimeType: "application/vnd.api+json")
        let body = String(decoding: try form.encoded(), as: UTF8.self)
        #expect(body.contains("Content-Type: text/plain; charset=utf-8\r\n"))
        #expect(body.contains("Content-Type: application/vnd.api+json\r\n"))
    }

    @Test(arguments: ["", "a b", "a\r\nb", "a\"b", "a;b", String(repeating: "x", count: 71), "ü"])
    func aBoundaryThatCannotStandInTheHeaderIsRefused(boundary: String) {
        var form = MultipartFormData(boundary: boundary)
        form.append("v", name: "f")
        #expect(throws: MultipartError.invalidBoundary(boundary)) { try form.encoded() }
    }

    /// Content that holds the line starting a part (CRLF, `--`, the boundary; RFC 2046 §5.1.1)
    /// would end its part there for the server, and what follows would read as parts of the
    /// sender's choosing: such a form is refused, naming the part. Content at a part's start
    /// follows the CRLF that ends the part's header, so `--B` there counts.
    @Test(arguments: [
        "\r\n--B", "--B", "x\r\n--B", "x\r\n--B--\r\n", "x\r\n--Bz", "\r\n--B\r\nContent-Disposition: form-data",
    ])
    func contentHoldingThePartDelimiterIsRefused(content: String) {
        var form = MultipartFormData(boundary: "B")
        form.append("ok", name: "first")
        form.append(Data(content.utf8), name: "hostile", fileName: "a.txt")
        #expect(throws: MultipartError.boundaryInPart(name: "hostile")) { try form.encoded() }
        var fields = MultipartFormData(boundary: "B")
        fields.append(["comment": .string(content)])
        #expect(throws: MultipartError.boundaryInPart(name: "comment")) { try fields.encoded() }
    }

    /// The boundary alone, or `--` and the boundary without the CRLF before it, starts no part.
    @Test(arguments: ["B", "x--B", "\n--B", "\r--B", "\r\n-B", "\r\n--", "\r\n--b", "x\r\n", "x\r", "x\r\n--"])
    func contentWithoutThePartDelimiterIsWritten(content: String) throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data(content.utf8), name: "f", fileName: "a.txt")
        let body = try form.encoded()
        #expect(body.count == Int(form.contentLength))
        #expect(body.range(of: Data(content.utf8)) != nil)
    }

    /// A file part is searched as it is read, across its chunks: the delimiter split between two
    /// reads of 1 MiB is found, and the body file is not left half written with it.
    @Test func aFileHoldingThePartDelimiterAcrossItsChunksIsRefused() throws {
        var contents = Data(repeating: UInt8(ascii: "a"), count: 1_048_576 - 3)
        contents.append(Data("\r\n--Boundary".utf8))
        let file = try temporaryFile(contents, name: "strata-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartFormData(boundary: "Boundary")
        try form.append(fileURL: file, name: "upload")
        #expect(throws: MultipartError.boundaryInPart(name: "upload")) { try form.encoded() }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString).body")
        defer { try? FileManager.default.removeItem(at: output) }
        #expect(throws: MultipartError.boundaryInPart(name: "upload")) { try form.write(to: output) }
        #expect(!FileManager.default.fileExists(atPath: output.path))

        var clean = Data(repeating: UInt8(ascii: "a"), count: 1_048_576 - 3)
        clean.append(Data("\r\n--Boundar".utf8))
        try clean.write(to: file)
        var accepted = MultipartFormData(boundary: "Boundary")
        try accepted.append(fileURL: file, name: "upload")
        #expect(try accepted.encoded().count == Int(accepted.contentLength))
    }

    /// Through the encoding, the refusal is the request's error; nothing is sent.
    @Test func theEncodingReportsTheRefusal() throws {
        var form = MultipartFormData(boundary: "fixed")
        form.append(Data("a\r\n--fixed\r\n".utf8), name: "blob", fileName: "b.bin")
        let request = URLRequest(url: try #require(URL(string: "https://api.example.com/upload")))
        #expect(throws: ParameterEncodingError.multipart(.boundaryInPart(name: "blob"))) {
            try MultipartEncoding(form: form).encode(request, with: [:])
        }
    }

    /// A date ISO 8601 cannot write is refused when the body is built, not written clamped; the
    /// fields before and after it are kept until then.
    @Test(arguments: [Double.nan, .infinity, 1e17, -1e17, 253_402_300_800])
    func aDateFieldISO8601CannotWriteIsRefused(seconds: Double) {
        var form = MultipartFormData(boundary: "B")
        form.append([
            "when": .date(Date(timeIntervalSince1970: seconds)), "at": ["x": .date(Date(timeIntervalSince1970: 0))],
        ])
        #expect(form.parts.map(\.name) == ["at[x]"])
        #expect(throws: MultipartError.self) { try form.encoded() }
        do {
            _ = try form.encoded()
        } catch {
            #expect(error.description.contains("\"when\""))
            #expect(error.description.contains("\(seconds)"))
        }
    }

    /// A number that is not finite has no text a server reads as a number (`nan`, `inf`): it is
    /// refused when the body is built, as the JSON and XML encodings refuse it.
    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNumberThatIsNotFiniteIsRefused(number: Double) {
        var form = MultipartFormData(boundary: "B")
        form.append(["n": ["x": .double(number)], "ok": .double(1.5)])
        #expect(form.parts.map(\.name) == ["ok"])
        #expect(throws: MultipartError.unwritableNumber(name: "n[x]", value: number.description)) {
            try form.encoded()
        }
    }

    @Test func mimeTypesComeFromATableOfExtensions() {
        #expect(MIMEType.forPathExtension("JPG") == "image/jpeg")
        #expect(MIMEType.forPathExtension("json") == "application/json")
        #expect(MIMEType.forPathExtension("mp4") == "video/mp4")
        #expect(MIMEType.forPathExtension("") == "application/octet-stream")
        #expect(MIMEType.forPathExtension("nope") == "application/octet-stream")
    }

    @Test func boundariesAreRandomAndSafe() {
        let boundaries = (0..<200).map { _ in MultipartFormData.makeBoundary() }
        #expect(Set(boundaries).count == 200)
        #expect(
            boundaries.allSatisfy {
                $0.hasPrefix("strata.") && $0.count == 39 && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." }
            })
    }

    @Test func aMissingFileIsATypedError() {
        var form = MultipartFormData()
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin")
        #expect(throws: MultipartError.self) { try form.append(fileURL: missing, name: "f") }
        #expect(throws: MultipartError.self) {
            try form.append(fileURL: FileManager.default.temporaryDirectory, name: "dir")
        }
    }

    @Test func aFileThatChangesSizeIsATypedError() throws {
        let file = try temporaryFile(Data(repeating: 1, count: 10))
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartFormData()
        try form.append(fileURL: file, name: "f")
        try Data(repeating: 1, count: 20).write(to: file)
        #expect(throws: MultipartError.self) { try form.encoded() }
    }
}

@Suite struct MultipartEncodingTests {
    private func postRequest() throws -> URLRequest {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/upload")))
        request.httpMethod = "POST"
        return request
    }

    @Test func aSmallBodyIsBuiltInMemoryWithContentTypeAndLength() throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data("file".utf8), name: "f", fileName: "f.txt")
        let request = try MultipartEncoding(form: form).encode(postRequest(), with: ["title": "T"])
        let body = try #require(request.httpBody)
        #expect(
            String(decoding: body, as: UTF8.self).hasPrefix(
                "--B\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nT\r\n"))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=B")
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(body.count))
        #expect(request.httpBodyStream == nil)
    }

    @Test func aBodyAboveTheThresholdIsStreamedToATemporaryFileWithTheSameBytes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var form = MultipartFormData(boundary: "B")
        form.append(Data(repeating: 7, count: 5_000), name: "f", fileName: "f.bin")
        let encoding = MultipartEncoding(form: form, memoryThreshold: 1_000, temporaryDirectory: directory)
        let inMemory = try MultipartEncoding(form: form).encode(postRequest(), with: ["a": 1]).httpBody

        let request = try encoding.encode(postRequest(), with: ["a": 1])
        let stream = try #require(request.httpBodyStream as? FileBodyStream)
        #expect(request.httpBody == nil)
        #expect(stream.removesFileOnRelease)
        #expect(try Data(contentsOf: stream.fileURL) == inMemory)
        #expect(request.value(forHTTPHeaderField: "Content-Length") == String(inMemory?.count ?? 0))
    }

    @Test func theTemporaryFileIsGoneOnceTheLastCopyOfTheRequestIsReleased() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var form = MultipartFormData()
        form.append(Data(repeating: 1, count: 2_000), name: "f", fileName: "f.bin")
        func encodeAndRelease() throws {
            let request = try MultipartEncoding(form: form, memoryThreshold: 100, temporaryDirectory: directory).encode(
                postRequest(), with: [:])
            #expect(request.httpBodyStream is FileBodyStream)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).count == 1)
        }
        try encodeAndRelease()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func aFormWithOnlyFilePartsStillGetsItsBody() throws {
        var form = MultipartFormData(boundary: "B")
        form.append(Data("x".utf8), name: "f", fileName: "f.txt")
        #expect(MultipartEncoding(form: form).writesBodyWithoutParameters)
        #expect(!JSONEncoding.default.writesBodyWithoutParameters)
    }

    @Test func theFileBodyStreamReadsTheWholeFileInChunks() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString).bin")
        let contents = Data((0..<100_000).map { UInt8($0 % 253) })
        try contents.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let stream = try FileBodyStream(fileURL: url)
        #expect(stream.length == 100_000)
        stream.open()
        var read = Data()
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while stream.hasBytesAvailable {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            read.append(buffer, count: count)
        }
        stream.close()
        #expect(read == contents)
        #expect(stream.streamStatus == .closed)
    }
}

@Suite struct UploadEncodingTests {
    @Test func dataAndFileBodiesCarryTheirLengthAndAContentTypeOnlyIfAbsent() throws {
        var request = URLRequest(url: try #require(URL(string: "https://api.example.com/upload")))
        request.httpMethod = "PUT"
        let data = try UploadEncoding.data(Data([1, 2, 3])).encode(request, with: [:])
        #expect(data.httpBody == Data([1, 2, 3]))
        #expect(data.value(forHTTPHeaderField: "Content-Length") == "3")
        #expect(data.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")

        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString).bin")
        try Data(repeating: 9, count: 1_000).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        request.setValue("image/png", forHTTPHeaderField: "Content-Type")
        let file = try UploadEncoding.file(url).encode(request, with: ["ignored": true])
        let stream = try #require(file.httpBodyStream as? FileBodyStream)
        #expect(stream.fileURL == url)
        #expect(!stream.removesFileOnRelease)
        #expect(file.value(forHTTPHeaderField: "Content-Length") == "1000")
        #expect(file.value(forHTTPHeaderField: "Content-Type") == "image/png")
    }
}

/// Only a regular file has a length a body can announce: a folder, a device or a pipe is refused
/// where a body is made of it (an upload, a multipart part), before anything blocks on it or is
/// sent, and a link counts as the file it names.
@Suite struct BodyFileTests {
    /// A folder holding a regular file, a link to it, a pipe and a folder, removed by `body`'s end.
    private func withFiles(_ body: (_ folder: URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("folder"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(repeating: 7, count: 3_000).write(to: folder.appendingPathComponent("file"))
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("link"), withDestinationURL: folder.appendingPathComponent("file"))
        #expect(mkfifo(folder.appendingPathComponent("pipe").path, 0o600) == 0)
        try body(folder)
    }

    @Test func aLinkCountsAsTheFileItNames() throws {
        try withFiles { folder in
            let link = folder.appendingPathComponent("link")
            #expect(try FileBodyStream(fileURL: link).length == 3_000)
            let request = try UploadEncoding.file(link).encode(URLRequest(url: folder), with: [:])
            #expect(request.value(forHTTPHeaderField: "Content-Length") == "3000")
            var form = MultipartFormData(boundary: "B")
            try form.append(fileURL: link, name: "f")
            #expect(try form.encoded().count > 3_000)
        }
    }

    @Test(arguments: [
        ("folder", "a folder"), ("pipe", "a pipe or another special file"), ("/dev/zero", "a device"),
        ("/dev/null", "a device"),
    ])
    func whatIsNotARegularFileIsRefused(name: String, kind: String) throws {
        try withFiles { folder in
            let url = name.hasPrefix("/") ? URL(fileURLWithPath: name) : folder.appendingPathComponent(name)
            let reason = "it is \(kind), not a regular file"
            #expect(throws: RequestValidationError.unusableBodyFile(path: url.path, reason: reason)) {
                try FileBodyStream(fileURL: url)
            }
            let refusal = ParameterEncodingError.multipart(.unreadableFile(path: url.path, reason: reason))
            #expect(throws: refusal) { try UploadEncoding.file(url).encode(URLRequest(url: folder), with: [:]) }
            var form = MultipartFormData(boundary: "B")
            #expect(throws: MultipartError.unreadableFile(path: url.path, reason: reason)) {
                try form.append(fileURL: url, name: "f")
            }
        }
    }

    /// The refusal's description shows the path and the reason with control characters escaped:
    /// a file name holding CR LF cannot break a log line.
    @Test func theRefusalsDescriptionEscapesControlCharacters() {
        let refusal = RequestValidationError.unusableBodyFile(path: "/tmp/a\r\nb", reason: "it is \"a\r\nb\", gone")
        #expect(!refusal.description.contains("\r") && !refusal.description.contains("\n"))
        #expect(refusal.description.contains(#"/tmp/a\r\nb"#))
        #expect(refusal.description.contains(#"cannot be uploaded: it is \"a\r\nb\", gone; the request was not sent."#))
    }

    @Test func aStreamKnowsWhenItsFileNoLongerHasItsLength() throws {
        try withFiles { folder in
            let file = folder.appendingPathComponent("file")
            let stream = try FileBodyStream(fileURL: file)
            try stream.checkUnchanged()
            for size in [3_001, 2_999, 0] {
                try Data(count: size).write(to: file)
                let reason = "it held 3000 bytes when the request was made and holds \(size) now"
                #expect(throws: RequestValidationError.unusableBodyFile(path: file.path, reason: reason)) {
                    try stream.checkUnchanged()
                }
            }
            try FileManager.default.removeItem(at: file)
            #expect(throws: RequestValidationError.self) { try stream.checkUnchanged() }
        }
    }
}
