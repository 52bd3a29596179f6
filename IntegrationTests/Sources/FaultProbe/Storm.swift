import Foundation
import Strata
import StrataTestServer
import StrataTestTransports
import StrataTesting

/// 2,000 requests of every kind the test server serves — bodies, delays, drips, errors, gzip,
/// redirects (a 307 with a body among them), `401` challenges, broken connections — a third of them
/// cancelled at a random moment. Every one must complete exactly once, with its value, a typed
/// error or a cancellation (only if it was cancelled), within a minute; the stack must still work
/// after. Random numbers come from a seed printed with the result, so a failing storm can be rerun
/// (`FaultProbe storm <seed>`).
enum Storm {
    static func run(seed: UInt64) async -> (summary: String, problems: [String]) {
        let server: TestServer
        do {
            server = try await TestServer.start()
        } catch {
            return ("no server", ["the test server did not start: \(error)"])
        }
        defer { Task { try? await server.shutdown() } }
        let transfer = DefaultDataTransferService(
            networkService: DefaultNetworkService(
                configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 30),
                sessionManager: SessionManager.underTest()),
            completionQueue: .global()
        )
        var random = SeededGenerator(seed: seed)
        let endpoints: [Endpoint<Data>] =
            [
                "echo", "delay/30", "status/500", "status/404", "drip?size=200&chunks=4&interval=20", "gzip",
                "redirect-chain/2", "bytes/2048", "basic-auth/u/p", "fault/close-before-response",
                "fault/short-content-length",
            ].map { Endpoint(path: $0) } + [
                Endpoint(
                    path: "redirect/307", method: .post, queryParameters: ["to": "/echo"], bodyParameters: ["a": 1])
            ]
        let count = 2_000
        let recorders = (0..<count).map { _ in CompletionRecorder<Result<Data, DataTransferError>>() }
        var cancelled = Set<Int>()
        let started = ContinuousClock.now
        for (index, recorder) in recorders.enumerated() {
            let endpoint = endpoints[Int(random.next() % UInt64(endpoints.count))]
            let cancellable = transfer.request(with: endpoint, completion: recorder.record)
            if random.next() % 3 == 0 {
                cancelled.insert(index)
                let delay = Int(random.next() % 60)
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) { cancellable.cancel() }
            }
        }
        var problems: [String] = []
        var outcomes: [String: Int] = [:]
        for (index, recorder) in recorders.enumerated() {
            guard let result = await recorder.first(timeout: 60) else {
                problems.append("request \(index) never completed")
                continue
            }
            let outcome = Probe.outcome(result)
            outcomes[outcome, default: 0] += 1
            if outcome == "cancelled", !cancelled.contains(index) {
                problems.append("request \(index) was cancelled without being asked to")
            }
            if outcome.hasPrefix("underlying") || outcome.hasPrefix("resolved") {
                problems.append("request \(index) ended with an untyped error: \(outcome)")
            }
        }
        let elapsed = ContinuousClock.now - started
        try? await Task.sleep(for: .milliseconds(500))
        let repeated = recorders.filter { $0.callCount != 1 }.count
        if repeated > 0 { problems.append("\(repeated) completions ran more than once") }
        if elapsed > .seconds(60) { problems.append("took \(elapsed)") }
        if case .failure(let error)? = await Probe.measure(Endpoint<Data>(path: "echo"), transfer).result {
            problems.append("the stack no longer works after the storm: \(error)")
        }
        let tally = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return ("storm of \(count) (seed \(seed)) in \(elapsed): \(tally)", problems)
    }
}
