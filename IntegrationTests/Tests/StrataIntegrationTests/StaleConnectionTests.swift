import Foundation
import NIOConcurrencyHelpers
import Strata
import StrataTestServer
import StrataTestTransports
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server closes a kept-alive connection as the next request on it arrives — its keep-alive
/// timeout ran out as the request went out — and the request, never answered, is sent again on a
/// new connection, without a retrier: `URLSession` (libcurl) does so, and so does
/// `AsyncHTTPClientTransport` for a request that may be sent twice (no body, an idempotent
/// method). Otherwise an app sees a failure every time a server's keep-alive timeout meets a request.
@Suite struct StaleConnectionTests {
    /// Answers the first request of each connection with `ok`, and closes the connection, without
    /// a word, when the second arrives.
    static func closingOnTheSecondRequest(heads: NIOLockedValueBox<[String]>) throws -> RawServer {
        try RawServer { connection in
            guard let first = connection.readHead() else { return }
            heads.withLockedValue { $0.append(first) }
            // A response to HEAD has no body, whatever its length says.
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n" + (first.hasPrefix("HEAD ") ? "" : "ok"))
            if let second = connection.readHead() {
                heads.withLockedValue { $0.append(second) }
            }
            connection.close()
        }
    }

    static func transfer(_ server: RawServer) -> DefaultDataTransferService {
        DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 5),
                sessionManager: SessionManager.underTest()),
            completionQueue: DispatchQueue(label: "StaleConnectionTests"))
    }

    static func result(
        _ endpoint: Endpoint<Data>, over transfer: DefaultDataTransferService
    ) async -> Result<Data, DataTransferError> {
        do throws(DataTransferError) {
            return .success(try await transfer.request(endpoint))
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete, .put])
    func aRequestDroppedOnAKeptConnectionGoesOutAgainOnANewOne(method: HTTPMethod) async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try Self.closingOnTheSecondRequest(heads: heads)
        defer { server.shutdown() }
        let transfer = Self.transfer(server)
        for index in 0..<4 {
            let result = await Self.result(Endpoint<Data>(path: "items/\(index)", method: method), over: transfer)
            #expect(throws: Never.self, "request \(index): \(result)") { try result.get() }
            if method != .head {
                #expect((try? result.get()) == Data("ok".utf8))
            }
        }
        // Requests 1–3 each went out twice: on the connection the server closed, then on a new one.
        let sent = heads.withLockedValue { $0 }.filter { $0.hasPrefix(method.rawValue + " ") }
        #expect(sent.count == 7, "\(sent.count) requests reached the server")
        #expect(server.connectionCount == 4)
    }

    /// A request that is not idempotent is not sent again: its answer might have been lost after
    /// the server acted on it. (libcurl sends it again over `URLSession`.)
    @Test(.enabled(if: TestTransport.current == .asyncHTTPClient))
    func aPostDroppedOnAKeptConnectionFailsOverAsyncHTTPClient() async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let server = try Self.closingOnTheSecondRequest(heads: heads)
        defer { server.shutdown() }
        let transfer = Self.transfer(server)
        let first = await Self.result(Endpoint<Data>(path: "a", method: .post), over: transfer)
        #expect((try? first.get()) == Data("ok".utf8))
        let second = await Self.result(Endpoint<Data>(path: "b", method: .post), over: transfer)
        guard case .failure(.networkFailure(.transport(let error))) = second else {
            Issue.record("the dropped POST ended with \(second)")
            return
        }
        #expect(error.code == .networkConnectionLost)
        #expect(server.connectionCount == 1)
    }

    /// A server that closes every connection unanswered gets the request twice at most, and the
    /// caller the failure.
    @Test func aServerThatNeverAnswersGetsARequestTwiceAtMost() async throws {
        let server = try RawServer { connection in
            connection.readHead()
            connection.close()
        }
        defer { server.shutdown() }
        let result = await Self.result(Endpoint<Data>(path: "items"), over: Self.transfer(server))
        guard case .failure(.networkFailure(.transport)) = result else {
            Issue.record("the unanswered GET ended with \(result)")
            return
        }
        #expect((1...2).contains(server.connectionCount), "\(server.connectionCount) connections")
    }
}
