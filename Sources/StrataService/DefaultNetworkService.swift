import Dispatch
import Foundation
import StrataConfiguration
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The standard ``NetworkService``: builds each endpoint's request against a configuration, sends it
/// through a session manager, validates the status and maps the outcome.
///
/// ```swift
/// let service = DefaultNetworkService(configuration: configuration)
/// service.request(endpoint: Endpoint<Void>(path: "health")) { result in
///     print(result)
/// }
/// ```
///
/// A request that cannot be built completes with ``NetworkError/urlGeneration(_:)`` or
/// ``NetworkError/encoding(_:)`` (asynchronously, like every other outcome); nothing traps. The
/// completion runs exactly once, on a queue of the session manager's choosing.
public struct DefaultNetworkService: NetworkService {
    /// The configuration endpoints are built against.
    public let configuration: any NetworkConfigurable
    /// The transport.
    public let sessionManager: any NetworkSessionManager

    /// Creates a service.
    /// - Parameters:
    ///   - configuration: The base URL, headers, query parameters and timeout shared by every request.
    ///   - sessionManager: Sends the requests; by default ``/StrataSession/SessionManager/shared``, one
    ///     manager over `URLSession` for every service that names none.
    public init(
        configuration: any NetworkConfigurable,
        sessionManager: any NetworkSessionManager = SessionManager.shared
    ) {
        self.configuration = configuration
        self.sessionManager = sessionManager
    }

    /// Sends the request `endpoint` describes and calls `completion` exactly once.
    ///
    /// The request is built on the calling thread, except when the endpoint's body encoding
    /// ``/StrataEncoding/ParameterEncoding/isSlowToEncode`` (a multipart form): then it is built on
    /// one of Strata's threads, so a large form never holds up the caller (the main thread, in an
    /// app); many forms at once share those threads rather than take one each.
    @discardableResult
    public func request(endpoint: any Requestable, completion: @escaping CompletionHandler) -> any NetworkCancellable {
        request(endpoint: endpoint, handsOff: false, completion: completion)
    }

    /// Sends the request `endpoint` describes; cancelling the Swift task cancels the request. The
    /// completion only resumes the task, so the session manager is told it may run it where the
    /// answer arrived (``/StrataSession/SessionManager/send(_:options:completion:)``).
    /// - Throws: ``NetworkError``.
    public func request(endpoint: any Requestable) async throws(NetworkError) -> NetworkResponse {
        try await withCancellableCallback(cancelledWith: .failure(.cancelled)) { completion in
            request(endpoint: endpoint, handsOff: true, completion: completion)
        }.get()
    }

    /// ``request(endpoint:completion:)``, for a completion that only hands the result on when
    /// `handsOff`.
    private func request(
        endpoint: any Requestable, handsOff: Bool, completion: @escaping CompletionHandler
    ) -> any NetworkCancellable {
        guard endpoint.bodyEncoding.isSlowToEncode else {
            return send(endpoint, handsOff: handsOff, completion: completion)
        }
        // A cancellation completes from a lane, after `cancel()` returns, as the manager's does.
        let call = CancellableCompletion(
            cancelledWith: .failure(.cancelled), scheduledBy: { StrataQueue.async($0) }, completion)
        // Kept here, in the caller's task: the encoding thread has none of its task-local values.
        let context = sessionManager.captureContext(endpoint.options.context)
        StrataQueue.async {
            // A request cancelled while it waited is neither encoded nor sent.
            guard !call.isCompleted else { return }
            call.attach(send(endpoint, context: context, handsOff: handsOff) { call.complete($0) })
        }
        return call
    }

    /// Builds the request `endpoint` describes, sends it, and calls `completion` exactly once.
    ///
    /// A session manager completes exactly once, at once when cancelled (with
    /// `URLError.cancelled`, which maps to ``NetworkError/cancelled``): its handle is the caller's.
    private func send(
        _ endpoint: any Requestable, context: RequestContext? = nil, handsOff: Bool,
        completion: @escaping CompletionHandler
    ) -> any NetworkCancellable {
        let request: URLRequest
        do {
            request = try endpoint.urlRequest(with: configuration)
        } catch {
            // Nothing was started, so there is nothing to cancel: this is the one completion.
            StrataQueue.async { completion(.failure(NetworkError(error))) }
            return CancellationToken()
        }
        var options = options(for: endpoint)
        options.handsOffCompletion = handsOff
        if let context {
            options.context = context
        }
        return sessionManager.send(request, options: options) { outcome in
            completion(NetworkError.result(outcome))
        }
    }

    /// `context` with what the session manager keeps of the calling task.
    public func captureContext(_ context: RequestContext) -> RequestContext {
        sessionManager.captureContext(context)
    }

    /// Sends the request `endpoint` describes through the session manager's stream (see
    /// ``NetworkService/stream(endpoint:to:)``); a request that cannot be built ends at once with
    /// its ``NetworkError``.
    public func stream(endpoint: any Requestable, to receiver: any ResponseReceiver) -> any ResponseExchange {
        let mapped = NetworkErrorMapping(receiver)
        guard endpoint.bodyEncoding.isSlowToEncode else { return startStream(endpoint, to: mapped) }
        let slot = ExchangeSlot()
        let context = sessionManager.captureContext(endpoint.options.context)
        StrataQueue.async {
            slot.set(startStream(endpoint, context: context, to: mapped))
        }
        return slot
    }

    private func startStream(
        _ endpoint: any Requestable, context: RequestContext? = nil, to receiver: NetworkErrorMapping
    ) -> any ResponseExchange {
        let request: URLRequest
        do {
            request = try endpoint.urlRequest(with: configuration)
        } catch {
            return ResponsePlayback.start(head: nil, steps: [.fail(NetworkError(error))], to: receiver)
        }
        var options = options(for: endpoint)
        if let context {
            options.context = context
        }
        return sessionManager.stream(request, options: options, to: receiver)
    }

    /// The endpoint's options, with the configuration's headers bound to its origin: a redirect
    /// to another origin drops them.
    private func options(for endpoint: any Requestable) -> RequestOptions {
        var options = endpoint.options
        let endpointHeaders = endpoint.headerParameters
        options.originBoundHeaderNames.formUnion(
            configuration.headers.lazy.map { $0.name }.filter { !endpointHeaders.contains(name: $0) })
        return options
    }
}
