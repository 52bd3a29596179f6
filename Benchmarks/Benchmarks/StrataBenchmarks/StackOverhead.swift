import Benchmark
import Foundation
import StackFixture
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension StackOverhead {
    /// Requests per iteration; the per-request figures are the iteration's divided by it. The Strata
    /// side awaits each request in turn: the in-memory session answers at once, so nothing changes
    /// thread and the figure is the stack's own cost. The callback API's hop to its completion queue
    /// is measured on its own, with requests issued back to back as an app does.

    static let batch = 100

    static func register() {
        let configuration = Settings.configuration()
        SideBySide.register(
            "Stack overhead: DataTransferService, in-memory session, vs URLRequest + JSONDecoder",
            operations: batch,
            baseline: {
                for _ in 0..<batch {
                    blackHole(try baseline(decoder: decoder))
                }
            },
            strata: {
                for _ in 0..<batch {
                    blackHole(try await transfer.request(endpoint))
                }
            }
        )
        Benchmark("Layer — Endpoint.urlRequest", configuration: configuration) { benchmark in
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                blackHole(try endpoint.urlRequest(with: StackOverhead.configuration))
            }
        }
        Benchmark("Layer — NetworkService, in-memory session", configuration: configuration) { benchmark in
            let service = DefaultNetworkService(
                configuration: StackOverhead.configuration, sessionManager: InMemorySessionManager())
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                service.request(endpoint: endpoint) { blackHole($0) }
            }
        }
        Benchmark("Layer — JSON decode only", configuration: configuration) { benchmark in
            let decoder = JSONDecoder()
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                blackHole(try decoder.decode(Page.self, from: body))
            }
        }
        Benchmark("Layer — callback API, completions on a serial queue", configuration: configuration) {
            benchmark in
            let transfer = DefaultDataTransferService(
                networkService: DefaultNetworkService(
                    configuration: StackOverhead.configuration, sessionManager: InMemorySessionManager()),
                completionQueue: completionQueue
            )
            let group = DispatchGroup()
            benchmark.record(operations: batch)
            for _ in 0..<batch {
                group.enter()
                transfer.request(with: endpoint) { result in
                    blackHole(result)
                    group.leave()
                }
            }
            group.wait()
        }
    }

    private static let decoder = JSONDecoder()

    private static let transfer = DefaultDataTransferService(
        networkService: DefaultNetworkService(configuration: configuration, sessionManager: InMemorySessionManager())
    )

    /// Where the callback benchmark's completions run: a serial queue, as an app's main queue is.
    static let completionQueue = DispatchQueue(label: "Strata.Benchmarks.completion")
}
