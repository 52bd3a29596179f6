import Benchmark
import Foundation
import OpenAPIRuntime
import StrataEncoding

/// Strata's Server-Sent Events parser against swift-openapi-runtime's, on the same bytes: a chat
/// answer of 4,096 events as an LLM streams it (`id`, `event` and a JSON `data` line each),
/// delivered in 16 KiB parts. Each side is used through its public API the way its documentation
/// shows: Strata's decoder part by part; the OpenAPI runtime's `asDecodedServerSentEvents()` over
/// an async sequence of the parts. (mattt/EventSource 1.1.1 does not build on Linux; see
/// Package.swift.)
enum SSEPeers {
    static let eventCount = 4_096

    static let document: [UInt8] = {
        var text = ": a chat answer\n\n"
        for index in 0..<eventCount {
            text += "id: \(index)\nevent: delta\ndata: {\"index\":\(index),\"delta\":\"token \(index) \"}\n\n"
        }
        return Array(text.utf8)
    }()

    static let parts: [Data] = stride(from: 0, to: document.count, by: 16_384).map {
        Data(document[$0..<min($0 + 16_384, document.count)])
    }

    static func register() {
        SideBySide.register(
            "SSE parsing \(document.count / 1024) KiB: Strata vs OpenAPIRuntime", operations: 1,
            bytes: document.count, iterations: 1_000, seconds: 10,
            setup: { try await check() },
            baseline: { blackHole(try await openAPIRuntime()) },
            strata: { blackHole(try strata()) }
        )
    }

    /// Every side reads the same events.
    static func check() async throws {
        let counts = (try strata(), try await openAPIRuntime())
        guard counts == (eventCount, eventCount) else { throw CocoaError(.coderReadCorrupt) }
    }

    /// The events Strata's decoder parses, counted.
    static func strata() throws -> Int {
        var decoder = ServerSentEventDecoder()
        var count = 0
        for part in parts {
            try decoder.decode(part) { event in
                if !event.data.isEmpty { count += 1 }
            }
        }
        try decoder.finish { _ in count += 1 }
        return count
    }

    static func openAPIRuntime() async throws -> Int {
        var count = 0
        for try await event in Chunks(parts: parts).asDecodedServerSentEvents() where event.data?.isEmpty == false {
            count += 1
        }
        return count
    }

    /// The parts as an async sequence of byte chunks, as the OpenAPI runtime's `HTTPBody` delivers them.
    struct Chunks: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>
        let parts: [Data]

        struct AsyncIterator: AsyncIteratorProtocol {
            let parts: [Data]
            var part = 0

            mutating func next() async -> ArraySlice<UInt8>? {
                guard part < parts.count else { return nil }
                defer { part += 1 }
                return ArraySlice(parts[part])
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parts: parts) }
    }
}
