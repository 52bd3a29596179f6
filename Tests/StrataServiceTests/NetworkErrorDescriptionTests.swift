import Foundation
import StrataCore
import StrataService
import StrataSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every `NetworkError` says what happened in words a user can act on — Foundation on Linux
/// describes a `URLError` only by its number — with the transport's details and the failing URL,
/// redacted.
@Suite struct NetworkErrorDescriptionTests {
    private let url = URL(string: "https://api.strata.test/items?api_key=s3cret&page=2")

    private func error(_ code: URLError.Code, detail: String? = nil) -> NetworkError {
        var userInfo: [String: Any] = [:]
        userInfo[NSURLErrorFailingURLErrorKey] = url
        userInfo[NSLocalizedDescriptionKey] = detail
        guard
            case .failure(let error) = NetworkError.result(TransportOutcome(error: URLError(code, userInfo: userInfo)))
        else { return .invalidResponse }
        return error
    }

    @Test(arguments: [
        (URLError.Code.cannotFindHost, "host name could not be resolved"),
        (.cannotConnectToHost, "No connection could be made to the server"),
        (.networkConnectionLost, "connection was lost before the response was complete"),
        (.serverCertificateUntrusted, "certificate is not trusted"),
        (.serverCertificateHasBadDate, "certificate has expired"),
        (.secureConnectionFailed, "secure (TLS) connection could not be made"),
        (.badServerResponse, "not valid HTTP"),
        (.cannotDecodeContentData, "could not be decoded"),
        (.badURL, "not one the transport can send to"),
    ])
    func eachCodeIsSaidInWordsWithTheRedactedURL(code: URLError.Code, words: String) {
        let description = error(code).description
        #expect(description.contains(words), "\(description)")
        #expect(description.contains("api_key=<redacted>&page=2"), "\(description)")
        #expect(!description.contains("s3cret"))
        #expect(description.hasSuffix("[URLError \(code.rawValue)]."))
        #expect(!description.contains("could not be completed"))
    }

    @Test func theTransportsDetailFollowsAndFoundationsEmptyOneDoesNot() {
        let curl = error(
            .cannotConnectToHost, detail: "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server"
        )
        #expect(
            curl.description
                == "No connection could be made to the server (refused or unreachable): Failed to connect to "
                + "127.0.0.1 port 9 after 0 ms: Couldn't connect to server "
                + "(https://api.strata.test/items?api_key=<redacted>&page=2) [URLError -1004].")
        let generic = error(
            .serverCertificateUntrusted, detail: "The operation could not be completed. (NSURLErrorDomain error -1202.)"
        )
        #expect(!generic.description.contains("operation could not be completed"))
    }

    /// A detail that quotes the failing URL shows it redacted too.
    @Test func aDetailQuotingTheURLIsRedacted() throws {
        let text = try #require(url?.absoluteString)
        let description = error(.cannotConnectToHost, detail: "could not reach \(text)").description
        #expect(!description.contains("s3cret"))
    }

    /// Which deadline fired: the pipeline's says the request's timeout.
    @Test func aTimeoutSaysWhichDeadlineFired() {
        let timedOut = error(
            .timedOut,
            detail: "no complete answer came within the request's timeout of 2 s, which bounds each attempt, "
                + "redirects included")
        guard case .timedOut = timedOut else {
            Issue.record("\(timedOut)")
            return
        }
        #expect(
            timedOut.description.hasPrefix(
                "The request timed out: no complete answer came within the request's timeout of 2 s"))
        #expect(!timedOut.description.contains("s3cret"))
        #expect(NetworkError.timedOut.description == "The request timed out [URLError -1001].")
    }
}
