import StrataTesting
import Testing

@testable import StrataSession

@Suite struct RecencyOrderTests {
    /// Random uses, forgets and removals agree with a list of keys searched on every step.
    @Test(arguments: [1, 2, 3]) func itAgreesWithAListOfKeys(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var order = RecencyOrder<Int>()
        var model: [Int] = []
        for _ in 0..<20_000 {
            let key = Int.random(in: 0..<50, using: &generator)
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                order.use(key)
                model.removeAll { $0 == key }
                model.append(key)
            case 6..<8:
                order.forget(key)
                model.removeAll { $0 == key }
            default:
                let oldest = order.removeOldest()
                #expect(oldest == model.first)
                if !model.isEmpty { model.removeFirst() }
            }
        }
        var rest: [Int] = []
        while let key = order.removeOldest() { rest.append(key) }
        #expect(rest == model)
    }
}
