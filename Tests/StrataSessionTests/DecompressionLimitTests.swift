import Foundation
import StrataCore
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A content-coded body that decodes to more than 500 times the `Content-Length` of its coded
/// bytes is a decompression bomb: the request fails as soon as the body passes that size, in memory
/// or to a file, on any transport (URLSession decodes without a limit of its own).
@Suite struct DecompressionLimitTests {
    /// A stub that delivers `size` bytes, as a decoding transport would, for 100 coded bytes.
    private func stub(decodedSize size: Int, coding: String? = "gzip") -> URLProtocolStub {
        var headers = ["Content-Length": "100"]
        headers["Content-Encoding"] = coding
        return URLProtocolStub { [headers] _ in .response(headers: headers, body: Data(count: size), chunks: 8) }
    }

    private func outcome(of stub: URLProtocolStub, toFile: Bool) async throws -> (Outcome, URL?) {
        let destination =
            toFile ? FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString)") : nil
        let manager = URLSessionManager(configuration: stub.makeSessionConfiguration())
        let (outcomes, _) = send(
            URLRequest(url: stub.baseURL.appendingPathComponent("body")), through: manager,
            options: RequestOptions(downloadDestination: destination))
        return (try #require(await outcomes.first(timeout: 5)), destination)
    }

    @Test(arguments: [false, true])
    func aBodyThatDecodesToMoreThan500TimesItsCodedLengthFails(toFile: Bool) async throws {
        let (outcome, destination) = try await outcome(of: stub(decodedSize: 50_001), toFile: toFile)
        #expect((outcome.error as? URLError)?.code == .cannotDecodeContentData, "\(String(describing: outcome.error))")
        #expect(outcome.error?.localizedDescription.contains("500 times the 100 bytes") == true)
        if let destination {
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
    }

    /// At the limit, and past it without a content coding (then the length is the body's own, and a
    /// longer body is the server's error, not a bomb), the body is delivered.
    @Test(arguments: [(50_000, "gzip"), (50_001, nil)] as [(Int, String?)])
    func atTheLimitOrWithoutACodingTheBodyArrives(size: Int, coding: String?) async throws {
        let (outcome, destination) = try await outcome(of: stub(decodedSize: size, coding: coding), toFile: false)
        #expect(outcome.error == nil)
        #expect(outcome.data?.count == size)
        #expect(destination == nil)
    }
}
