import Foundation
import StrataCore
import StrataSession
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite struct RetryPolicyTests {
    private func failure(
        method: String = "GET",
        status: Int? = nil,
        headers: [String: String] = [:],
        error: any Error = SessionError.unacceptableStatusCode(0),
        attempt: Int = 1,
        startDate: Date = Date()
    ) throws -> RequestFailure {
        let url = try #require(URL(string: "https://api.example.com/x"))
        var request = URLRequest(url: url)
        request.httpMethod = method
        let response = status.flatMap {
            HTTPURLResponse(url: url, statusCode: $0, httpVersion: nil, headerFields: headers)
        }
        return RequestFailure(
            request: request, response: response, data: Data(), error: error, attemptCount: attempt,
            startDate: startDate)
    }

    private func delay(_ decision: RetryDecision) -> TimeInterval? {
        switch decision {
        case .retry: return 0
        case .retryAfter(let seconds): return seconds
        case .doNotRetry, .doNotRetryWithError: return nil
        }
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func transientStatusesAreRetried(status: Int) throws {
        #expect(delay(RetryPolicy(jitter: 0).decision(for: try failure(status: status))) == 0.5)
    }

    @Test(arguments: [400, 401, 403, 404, 409, 422, 501])
    func otherStatusesAreNot(status: Int) throws {
        #expect(delay(RetryPolicy().decision(for: try failure(status: status))) == nil)
    }

    @Test(arguments: ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"])
    func idempotentMethodsAreRetried(method: String) throws {
        #expect(delay(RetryPolicy().decision(for: try failure(method: method, status: 503))) != nil)
    }

    @Test(arguments: ["POST", "PATCH", "CONNECT"])
    func nonIdempotentMethodsAreNotUnlessConfigured(method: String) throws {
        #expect(delay(RetryPolicy().decision(for: try failure(method: method, status: 503))) == nil)
        let permissive = RetryPolicy(retryableMethods: [HTTPMethod(method)])
        #expect(delay(permissive.decision(for: try failure(method: method, status: 503))) != nil)
    }

    @Test func transientURLErrorsAreRetriedAndOthersAreNot() throws {
        #expect(delay(RetryPolicy().decision(for: try failure(error: URLError(.networkConnectionLost)))) != nil)
        #expect(delay(RetryPolicy().decision(for: try failure(error: URLError(.timedOut)))) != nil)
        #expect(delay(RetryPolicy().decision(for: try failure(error: URLError(.badURL)))) == nil)
        #expect(delay(RetryPolicy().decision(for: try failure(error: URLError(.cancelled)))) == nil)
    }

    @Test func attemptsStopAtTheMaximum() throws {
        let policy = RetryPolicy(maximumAttempts: 3)
        #expect(delay(policy.decision(for: try failure(status: 503, attempt: 2))) != nil)
        #expect(delay(policy.decision(for: try failure(status: 503, attempt: 3))) == nil)
    }

    @Test func backoffGrowsExponentiallyWithinItsJitterAndCap() {
        let exact = RetryPolicy(initialDelay: 0.5, multiplier: 2, maximumDelay: 3, jitter: 0)
        #expect([1, 2, 3, 4].map(exact.backoff(afterAttempt:)) == [0.5, 1, 2, 3])
        let jittered = RetryPolicy(initialDelay: 1, multiplier: 2, jitter: 0.25)
        let samples = (0..<500).map { _ in jittered.backoff(afterAttempt: 2) }
        #expect(samples.allSatisfy { (1.5...2.5).contains($0) })
        #expect(Set(samples).count > 100)
    }

    /// A jitter set after the policy is made is kept within 0…1 too: an infinite one made the
    /// spread's range infinite, and `Double.random(in:)` traps on that.
    @Test(arguments: [Double.infinity, -.infinity, .nan, 7, -3, .greatestFiniteMagnitude])
    func aJitterOutOfRangeIsClampedHoweverItIsSet(jitter: Double) {
        var policy = RetryPolicy(initialDelay: 1, multiplier: 2, maximumDelay: 10)
        policy.jitter = jitter
        #expect((0...1).contains(policy.jitter))
        #expect(RetryPolicy(jitter: jitter).jitter == policy.jitter)
        let samples = (0..<50).map { _ in policy.backoff(afterAttempt: 2) }
        #expect(samples.allSatisfy { (0...4).contains($0) })
    }

    @Test func retryAfterInSecondsOrAsAnHTTPDateSetsTheDelay() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let policy = RetryPolicy(jitter: 0)
        #expect(delay(policy.decision(for: try failure(status: 503, headers: ["Retry-After": "7"]), now: now)) == 7)
        let date = "Tue, 14 Nov 2023 22:13:30 GMT"  // now + 10 s
        #expect(delay(policy.decision(for: try failure(status: 429, headers: ["Retry-After": date]), now: now)) == 10)
        #expect(RetryPolicy.parseRetryAfter("Tue, 14 Nov 2023 22:00:00 GMT", now: now) == 0)
        #expect(RetryPolicy.parseRetryAfter("Tuesday, 14-Nov-23 22:13:30 GMT", now: now) == 10)
        #expect(RetryPolicy.parseRetryAfter("soon", now: now) == nil)
        #expect(
            delay(policy.decision(for: try failure(status: 503, headers: ["Retry-After": "soon"]), now: now)) == 0.5)
        #expect(
            delay(RetryPolicy(maximumDelay: 5).decision(for: try failure(status: 503, headers: ["Retry-After": "60"])))
                == nil)
    }

    /// `Retry-After` is `1*DIGIT` or a date (RFC 9110, 10.2.3): more seconds than any integer holds
    /// is 2³¹ (RFC 9111, 1.2.2), a wait longer than any maximum, never a retry after the usual
    /// backoff; a sign makes no delay-seconds, and the backoff applies as for any value that is neither.
    @Test func aRetryAfterBeyondAnyIntegerIsNotRetriedAndASignedOneIsNoDelay() throws {
        #expect(RetryPolicy.parseRetryAfter("99999999999999999999999") == 2_147_483_648)
        #expect(RetryPolicy.parseRetryAfter(" 120 ") == 120)
        for signed in ["-5", "+5", "5.5", "0x10", ""] {
            #expect(RetryPolicy.parseRetryAfter(signed) == nil, "\(signed)")
        }
        let policy = RetryPolicy(jitter: 0)
        let huge = try failure(status: 503, headers: ["Retry-After": "99999999999999999999999"])
        #expect(delay(policy.decision(for: huge)) == nil)
        #expect(delay(policy.decision(for: try failure(status: 503, headers: ["Retry-After": "-5"]))) == 0.5)
    }

    @Test func theDeadlineStopsRetriesThatWouldEndTooLate() throws {
        let now = Date()
        let policy = RetryPolicy(jitter: 0, deadline: 10)
        #expect(
            delay(policy.decision(for: try failure(status: 503, startDate: now.addingTimeInterval(-5)), now: now))
                == 0.5)
        #expect(
            delay(policy.decision(for: try failure(status: 503, startDate: now.addingTimeInterval(-9.8)), now: now))
                == nil)
        #expect(
            delay(
                policy.decision(for: try failure(status: 503, headers: ["Retry-After": "20"], startDate: now), now: now)
            ) == nil)
    }
}
