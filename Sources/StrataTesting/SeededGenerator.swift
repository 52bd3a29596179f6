/// A random number generator that a seed repeats (SplitMix64): for tests that draw random input and
/// must be able to replay a failure.
///
/// ```swift
/// var generator = SeededGenerator(seed: 0x5EED)
/// let count = Int.random(in: 1...6, using: &generator)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    /// The seed it started from.
    public let seed: UInt64
    private var state: UInt64

    /// A generator whose numbers follow from `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
