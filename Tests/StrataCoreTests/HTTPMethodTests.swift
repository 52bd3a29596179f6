import StrataCore
import Testing

extension HTTPMethod {
    fileprivate static let purge = HTTPMethod("PURGE")
}

@Suite struct HTTPMethodTests {
    @Test func standardMethodsSendTheirRFC9110Names() {
        let methods: [HTTPMethod] = [.get, .head, .post, .put, .patch, .delete, .options, .trace, .connect, .query]
        #expect(
            methods.map(\.rawValue) == [
                "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "QUERY",
            ])
    }

    @Test func usersCanAddTheirOwnMethods() {
        #expect(HTTPMethod.purge.rawValue == "PURGE")
        #expect(HTTPMethod.purge == HTTPMethod(rawValue: "PURGE"))
    }

    @Test func methodsAreCaseSensitiveAndBuildFromLiterals() {
        let literal: HTTPMethod = "GET"
        #expect(literal == .get)
        #expect(HTTPMethod("get") != .get)
        #expect(HTTPMethod.post.description == "POST")
    }
}
