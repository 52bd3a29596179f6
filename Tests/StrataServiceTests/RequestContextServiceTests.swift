import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataSession
import StrataTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

private enum Tenant {
    @TaskLocal static var current: String?
}

/// Keeps the caller's tenant; the transport writes down the tenant it is called with.
private final class TenantMonitor: EventMonitor, Transport {
    let base: any Transport
    private let seen = Locked<[String]>([])

    init(_ base: any Transport) {
        self.base = base
    }

    var log: [String] { seen.value }

    func captureContext(into context: inout RequestContext) {
        guard let tenant = Tenant.current else { return }
        context.rebinding { body in Tenant.$current.withValue(tenant, operation: body) }
    }

    func send(_ attempt: TransportAttempt, to receiver: any ResponseReceiver) -> any ResponseExchange {
        seen.withLock { $0.append(Tenant.current ?? "-") }
        return base.send(attempt, to: receiver)
    }
}

/// The network service keeps the caller's context across its own hop: a multipart body is encoded
/// on a queue of its own, where the caller's task-local values are gone, and still the request
/// carries them — on the callback API and the async API alike.
@Suite struct RequestContextServiceTests {
    /// The stub answers only while it lives: the suite keeps it.
    private let stub = URLProtocolStub { _ in .response(statusCode: 200, body: Data("ok".utf8)) }

    private func service() -> (DefaultNetworkService, TenantMonitor) {
        let monitor = TenantMonitor(URLSessionTransport(configuration: stub.makeSessionConfiguration()))
        let manager = SessionManager(transport: monitor, monitors: [monitor])
        return (
            DefaultNetworkService(configuration: NetworkConfiguration(baseURL: stub.baseURL), sessionManager: manager),
            monitor
        )
    }

    private func form() -> Endpoint<Void> {
        var form = MultipartFormData()
        form.append(Data("hello".utf8), name: "note", fileName: "note.txt")
        return Endpoint(path: "upload", method: .post, bodyEncoding: MultipartEncoding(form: form))
    }

    @Test func aMultipartRequestEncodedOnAQueueOfItsOwnKeepsTheCallersContext() async throws {
        let (service, monitor) = service()
        let recorder = CompletionRecorder<Result<NetworkResponse, NetworkError>>()
        DispatchQueue(label: "caller").async {
            Tenant.$current.withValue("acme") {
                _ = service.request(endpoint: form(), completion: recorder.record)
            }
        }
        #expect(try #require(await recorder.first()).get().statusCode == 200)
        #expect(monitor.log == ["acme"])
    }

    /// An event source connects from a queue of its own, and again after each connection ends:
    /// every connection carries the context its caller had when it started the source.
    @Test func everyConnectionOfAnEventSourceKeepsTheCallersContext() async throws {
        let connections = Locked(0)
        let stream = URLProtocolStub { _ in
            connections.withLock { count in
                count += 1
                return count
            } <= 3
                ? .response(
                    statusCode: 200, headers: ["Content-Type": "text/event-stream"], body: Data("data: a\n\n".utf8))
                : .response(statusCode: 204)
        }
        let monitor = TenantMonitor(URLSessionTransport(configuration: stream.makeSessionConfiguration()))
        let service = DefaultNetworkService(
            configuration: NetworkConfiguration(baseURL: stream.baseURL),
            sessionManager: SessionManager(transport: monitor, monitors: [monitor]))
        let ended = CompletionRecorder<Result<Void, NetworkError>>()
        let events = CompletionRecorder<ServerSentEvent>()
        DispatchQueue(label: "caller").async {
            Tenant.$current.withValue("acme") {
                _ = service.eventSource(
                    endpoint: Endpoint<Void>(path: "events"), reconnectionTime: 0, onEvent: events.record,
                    completion: ended.record)
            }
        }
        try #require(await ended.first()).get()
        #expect(events.callCount == 3)
        #expect(monitor.log == ["acme", "acme", "acme", "acme"])
    }

    @Test func theAsyncAPIKeepsTheCallersContextForEveryEncoding() async throws {
        let (service, monitor) = service()
        try await Tenant.$current.withValue("acme") {
            _ = try await service.request(endpoint: form())
            _ = try await service.request(endpoint: Endpoint<Void>(path: "plain"))
        }
        #expect(monitor.log == ["acme", "acme"])
    }
}
