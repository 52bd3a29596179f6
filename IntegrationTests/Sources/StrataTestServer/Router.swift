import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Finds the handler for a request. Patterns are paths whose `{name}` segments capture a value;
/// a route added later wins over an earlier one with the same pattern, so callers can override.
public final class Router: Sendable {
    /// Answers a request.
    public typealias Handler = @Sendable (TestRequest) -> TestReply

    /// Receives a request's body as it arrives and answers once it has all of it; for bodies too
    /// large to hold in memory.
    public typealias StreamingHandler = @Sendable (TestRequest) -> any BodyConsumer

    private struct Route<Handler: Sendable>: Sendable {
        let method: String?
        let segments: [Substring]
        let handler: Handler
    }

    private let routes = NIOLockedValueBox<[Route<Handler>]>([])
    private let streamingRoutes = NIOLockedValueBox<[Route<StreamingHandler>]>([])

    /// Creates an empty router.
    public init() {}

    /// Adds a route for `method` (`nil` for any) and `pattern`, such as `/status/{code}`.
    public func add(_ method: String?, _ pattern: String, _ handler: @escaping Handler) {
        let route = Route(method: method?.uppercased(), segments: Self.segments(pattern), handler: handler)
        routes.withLockedValue { $0.append(route) }
    }

    /// Adds a route whose body is handed to a consumer chunk by chunk instead of being collected.
    /// The request passed to `handler` has an empty body.
    public func addStreaming(_ method: String?, _ pattern: String, _ handler: @escaping StreamingHandler) {
        let route = Route(method: method?.uppercased(), segments: Self.segments(pattern), handler: handler)
        streamingRoutes.withLockedValue { $0.append(route) }
    }

    /// The body consumer for `request`, if a streaming route matches it.
    func consumer(for request: TestRequest) -> (any BodyConsumer)? {
        Self.match(request, in: streamingRoutes).map { handler, request in handler(request) }
    }

    /// The reply for `request`: the last matching route's, or a `404`.
    func reply(to request: TestRequest) -> TestReply {
        guard let (handler, request) = Self.match(request, in: routes) else {
            return .json(#"{"error": "no route for \#(request.method) \#(request.path)"}"#, status: 404)
        }
        return handler(request)
    }

    /// The last route in `routes` that matches `request`, with the request's captured parameters.
    private static func match<H: Sendable>(
        _ request: TestRequest,
        in routes: NIOLockedValueBox<[Route<H>]>
    ) -> (H, TestRequest)? {
        let path = segments(request.path)
        for route in routes.withLockedValue({ $0 }).reversed() {
            guard route.method == nil || route.method == request.method.uppercased(),
                let parameters = match(route.segments, path)
            else { continue }
            var request = request
            request.parameters = parameters
            return (route.handler, request)
        }
        return nil
    }

    private static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    private static func match(_ pattern: [Substring], _ path: [Substring]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(pattern, path) {
            if expected.hasPrefix("{"), expected.hasSuffix("}") {
                parameters[String(expected.dropFirst().dropLast())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}

/// Takes a request body chunk by chunk, then answers.
public protocol BodyConsumer: AnyObject {
    /// Takes the next chunk of the body.
    func consume(_ chunk: ByteBuffer)
    /// The reply, once the whole body has been consumed.
    func finish() -> TestReply
}
