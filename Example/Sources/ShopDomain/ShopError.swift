/// What can go wrong, in the shop's own terms. Repositories translate transport and server
/// failures into these, so the rest of the app never sees HTTP.
public enum ShopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer items are in stock than were ordered.
    case outOfStock(available: Int)
    /// The server rejected the input; the message says why.
    case invalidInput(String)
    /// Signing in failed or the session could not be renewed.
    case signInRequired
    /// The server could not be reached.
    case offline
    /// The shop's service failed; try again later.
    case unavailable
    /// The request was cancelled.
    case cancelled
    /// Something unexpected, described.
    case unexpected(String)

    /// A sentence for the customer.
    public var description: String {
        switch self {
        case .outOfStock(let available): return "Only \(available) left in stock."
        case .invalidInput(let message): return "Please check your input: \(message)"
        case .signInRequired: return "Please sign in again."
        case .offline: return "The shop cannot be reached. Check your connection."
        case .unavailable: return "The shop is not available right now. Please try again later."
        case .cancelled: return "Cancelled."
        case .unexpected(let detail): return "Something went wrong (\(detail))."
        }
    }
}
