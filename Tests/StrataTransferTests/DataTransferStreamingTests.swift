import Dispatch
import Foundation
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataService
import StrataTesting
import StrataTransfer
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The data-transfer layer's streams: JSON Lines decoded with the endpoint's decoder, events, and
/// the scripted doubles of ``MockDataTransferService`` and ``MockNetworkService``.
@Suite struct DataTransferStreamingTests {
    private struct Order: Codable, Equatable, Sendable {
        let id: Int
    }

    @Test func jsonLinesAreDecodedAsTheEndpointsResponseOneLineAtATime() async throws {
        let network = MockNetworkService()
        network.enqueue(stream: try StreamScript.jsonLines([Order(id: 1), Order(id: 2)], every: 0.01))
        let transfer = DefaultDataTransferService(networkService: network, completionQueue: .global())
        var orders: [Order] = []
        for try await order in transfer.stream(Endpoint<Order>(path: "orders/export")) {
            orders.append(order)
        }
        #expect(orders == [Order(id: 1), Order(id: 2)])
    }

    @Test func aLineThatIsNotAValueIsAParsingErrorWithTheLine() async throws {
        let network = MockNetworkService()
        network.enqueue(stream: StreamScript.lines(["{\"id\":1}", "{\"id\":\"x\"}"]))
        let transfer = DefaultDataTransferService(networkService: network, completionQueue: .global())
        var orders: [Order] = []
        do {
            for try await order in transfer.stream(Endpoint<Order>(path: "orders/export")) { orders.append(order) }
            Issue.record("the second line is not an order")
        } catch {
            guard case .parsing(_, let body) = error else {
                Issue.record("expected a parsing error, got \(error)")
                return
            }
            #expect(body == Data("{\"id\":\"x\"}".utf8))
        }
        #expect(orders == [Order(id: 1)])
    }

    @Test func callbacksRunOnTheCompletionQueueAndTheMockPlaysScripts() async throws {
        let queue = DispatchQueue(label: "strata.test.completion")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let transfer = MockDataTransferService(completionQueue: queue)
        transfer.enqueue(.stream(.events([ServerSentEvent(data: "a"), ServerSentEvent(data: "b")], every: 0.01)))
        let seen = Locked<[String]>([])
        let onQueue = Locked(true)
        let done = Locked(false)
        transfer.events(with: Endpoint<Void>(path: "chat")) { event in
            seen.withLock { $0.append(event.data) }
            if DispatchQueue.getSpecific(key: key) != true { onQueue.withLock { $0 = false } }
        } completion: { result in
            if DispatchQueue.getSpecific(key: key) != true { onQueue.withLock { $0 = false } }
            done.withLock { $0 = (try? result.get()) != nil }
        }
        for _ in 0..<200 where !done.value { try await Task.sleep(for: .milliseconds(5)) }
        #expect(done.value)
        #expect(seen.value == ["a", "b"])
        #expect(onQueue.value)
        #expect(transfer.requests.first?.url?.path == "/chat")

        // Values stubbed as they are.
        transfer.enqueue(.value([Order(id: 7)]))
        var orders: [Order] = []
        for try await order in transfer.stream(Endpoint<Order>(path: "orders")) { orders.append(order) }
        #expect(orders == [Order(id: 7)])
    }
}
