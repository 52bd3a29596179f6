import Foundation
import ShopDomain
import Strata

/// Walks through the shop's features, one numbered step each, printing what happens. Each step
/// checks its own outcome, so the tour doubles as a smoke test of the whole stack.
public struct Tour: Sendable {
    private let root: CompositionRoot
    private let expireSessions: (@Sendable () -> Void)?
    private let refreshes: Counter
    private let write: @Sendable (String) -> Void

    /// Creates the tour.
    /// - Parameters:
    ///   - root: The wired app.
    ///   - refreshes: Counts token refreshes (the composition root's `didRefreshToken` increments it).
    ///   - expireSessions: Makes the server expire access tokens; only the embedded demo API can.
    ///   - write: Where lines go.
    public init(
        root: CompositionRoot,
        refreshes: Counter,
        expireSessions: (@Sendable () -> Void)?,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.root = root
        self.refreshes = refreshes
        self.expireSessions = expireSessions
        self.write = write
    }

    /// How many steps the tour has.
    public var stepCount: Int { steps.count }

    /// Runs every step. Returns how many did not go as expected.
    public func run() async -> Int {
        var failures = 0
        for (number, step) in steps.enumerated() {
            write("\n\(number + 1). \(step.title)")
            do {
                try await step.run()
            } catch {
                write("   ✗ \(error)")
                failures += 1
            }
        }
        return failures
    }

    private struct Step {
        let title: String
        let run: () async throws -> Void
    }

    /// A step whose outcome was not what the tour expects.
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    private var steps: [Step] {
        [
            Step(title: "List products — GET with query parameters", run: listProducts),
            Step(title: "Place an order — POST with a JSON body", run: placeOrder),
            Step(title: "Subscribe to the newsletter — form post", run: subscribe),
            Step(title: "Upload a review photo — multipart, streamed from a file, with progress", run: upload),
            Step(title: "Check stock — XML request and response", run: checkStock),
            Step(title: "Your account — protected endpoint, token refresh", run: showAccount),
            Step(title: "Track the order — Server-Sent Events, each step as it arrives", run: trackOrder),
            Step(title: "Order more than is in stock — server error mapped to a domain error", run: overOrder),
            Step(title: "Request a slow report, then cancel it", run: cancelReport),
        ]
    }

    private func listProducts() async throws {
        let query = ProductQuery(category: "books", tags: ["swift"], page: 1, pageSize: 2)
        let page = try await root.products.products(matching: query)
        write("   \(page.products.count) of \(page.totalCount) books tagged swift, page \(page.page):")
        for product in page.products {
            write("   • #\(product.id) \(product.name) — \(product.price)")
        }
        guard page.products.count == 2, page.totalCount == 3 else { throw Unexpected(description: "wrong page") }
    }

    private func placeOrder() async throws {
        let order = try await root.orders.placeOrder(productID: 1, quantity: 2)
        let total = String(format: "$%d.%02d", order.totalCents / 100, order.totalCents % 100)
        write("   ✓ order \(order.id): \(order.quantity) × product #\(order.productID), total \(total)")
    }

    private func subscribe() async throws {
        let subscription = try await root.newsletter.subscribe(
            email: "ada@example.com", topics: ["releases", "offers & news"])
        write("   ✓ \(subscription.email) subscribed to: \(subscription.topics.joined(separator: ", "))")
        guard subscription.topics == ["releases", "offers & news"] else {
            throw Unexpected(description: "topics came back as \(subscription.topics)")
        }
    }

    private func upload() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-example-photo.jpg")
        try Data(repeating: 0xA5, count: 1_048_576).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let shown = Counter()
        let attachment = try await root.attachments.upload(fileURL: file, caption: "Great book!") { [write] fraction in
            // One line per quarter, however many progress reports arrive.
            let quarter = Int(fraction * 4)
            if shown.raise(to: quarter) {
                write("   … \(quarter * 25)% sent")
            }
        }
        write(
            "   ✓ server received \(attachment.fileName): \(attachment.size) bytes, caption \"\(attachment.caption)\"")
        guard attachment.size == 1_048_576 else { throw Unexpected(description: "the size differs") }
    }

    private func checkStock() async throws {
        let level = try await root.products.stockLevel(of: 2)
        write("   ✓ product #\(level.productID): \(level.available) available in \(level.warehouse)")
    }

    private func showAccount() async throws {
        try await root.account.signIn(user: "ada", password: "correct horse battery staple")
        let account = try await root.account.account()
        write("   ✓ signed in: \(account.name), \(account.points) points")
        guard let expireSessions else {
            write("   (token expiry is only simulated by the local demo API)")
            return
        }
        expireSessions()
        write("   … the server expires the access token; the next call gets a 401")
        let again = try await root.account.account()
        write("   ✓ token refreshed \(refreshes.value) time(s), request retried: \(again.name), \(again.points) points")
        guard refreshes.value == 1 else { throw Unexpected(description: "\(refreshes.value) refreshes") }
    }

    private func trackOrder() async throws {
        let started = ContinuousClock.now
        let steps = Updates()
        try await root.orders.trackOrder("ord-1") { [write] update in
            let elapsed = ContinuousClock.now - started
            let milliseconds =
                elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            steps.append(update.status)
            write("   … \(update.status) (after \(milliseconds) ms)")
        }
        write("   ✓ \(steps.all.count) updates, each shown as it arrived")
        guard steps.all == ["packed", "shipped", "out for delivery", "delivered"] else {
            throw Unexpected(description: "updates came as \(steps.all)")
        }
    }

    private func overOrder() async throws {
        let outcome: Result<Order, ShopError>
        do {
            outcome = .success(try await root.orders.placeOrder(productID: 2, quantity: 10))
        } catch {
            outcome = .failure(error)
        }
        guard case .failure(let error) = outcome, case .outOfStock = error else {
            throw Unexpected(description: "expected out of stock, got \(outcome)")
        }
        write("   ✓ the server answered 409; the app got ShopError.outOfStock: \"\(error)\"")
    }

    private func cancelReport() async throws {
        let started = ContinuousClock.now
        let result: Result<SalesReport, ShopError> = await withCheckedContinuation { continuation in
            let request = root.orders.salesReport { continuation.resume(returning: $0) }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
                write("   … cancelling after 0.3 s")
                request.cancel()
            }
        }
        let elapsed = ContinuousClock.now - started
        guard case .failure(.cancelled) = result else { throw Unexpected(description: "\(result)") }
        write(
            "   ✓ completed once, with ShopError.cancelled, after \(elapsed.formatted(.units(fractionalPart: .show(length: 2)))) (the server needed 5 s)"
        )
    }
}

/// The statuses a tracked order went through, in order.
final class Updates: @unchecked Sendable {  // Sendable: `lock` guards `statuses`.
    private let lock = NSLock()
    private var statuses: [String] = []

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return statuses
    }

    func append(_ status: String) {
        lock.lock()
        defer { lock.unlock() }
        statuses.append(status)
    }
}

/// A thread-safe counter.
public final class Counter: @unchecked Sendable {  // Sendable: `lock` guards `count`.
    private let lock = NSLock()
    private var count = 0

    /// Creates a counter at zero.
    public init() {}

    /// The current count.
    public var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    /// Adds one.
    public func increment() {
        lock.lock()
        defer { lock.unlock() }
        count += 1
    }

    /// Raises the count to `newValue` if that is higher; returns whether it did.
    func raise(to newValue: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard newValue > count else { return false }
        count = newValue
        return true
    }
}
