import StrataCore
import Testing

private enum Depth {
    @TaskLocal static var current = 0
}

private enum Name: RequestContextKey { typealias Value = String }
private enum Count: RequestContextKey { typealias Value = Int }

@Suite struct RequestContextValueTests {
    @Test func valuesAreKeptByTheirKeysType() {
        var context = RequestContext()
        #expect(context.isEmpty)
        context[Name.self] = "a"
        context[Count.self] = 2
        #expect(context[Name.self] == "a")
        #expect(context[Count.self] == 2)
        context[Name.self] = nil
        #expect(context[Name.self] == nil)
        #expect(!context.isEmpty)
    }

    @Test func runBindsEveryScopeTheFirstOutermostAndReturnsTheBodysResult() {
        var context = RequestContext()
        let order = Locked<[Int]>([])
        context.rebinding { body in
            order.withLock { $0.append(Depth.current) }
            Depth.$current.withValue(Depth.current + 1, operation: body)
        }
        context.rebinding { body in
            order.withLock { $0.append(Depth.current) }
            Depth.$current.withValue(Depth.current * 10, operation: body)
        }
        #expect(context.run { Depth.current } == 10)
        #expect(order.value == [0, 1])
        #expect(Depth.current == 0)
    }

    @Test func aScopeThatDoesNotRunItsBodyIsPassedOverAndTheBodyRunsOnce() {
        var context = RequestContext()
        context.rebinding { _ in }
        context.rebinding { body in Depth.$current.withValue(7, operation: body) }
        let runs = Locked(0)
        let seen = context.run {
            runs.withLock { $0 += 1 }
            return Depth.current
        }
        #expect(seen == 7)
        #expect(runs.value == 1)
    }
}
