import ShopApp
import Strata
import Testing

@Suite struct LaunchOptionsTests {
    @Test func localIsTheDefault() throws {
        let options = try LaunchOptions(arguments: [], processEnvironment: [:])
        #expect(options.environment == .local && !options.verbose && !options.help)
        #expect(options.transport == .urlSession)
    }

    @Test func theTransportIsChosenByName() throws {
        #expect(
            try LaunchOptions(arguments: ["--transport", "asynchttpclient"], processEnvironment: [:]).transport
                == .asyncHTTPClient)
        #expect(
            try LaunchOptions(arguments: ["--transport=URLSession"], processEnvironment: [:]).transport == .urlSession)
        #expect(throws: LaunchError.unknownTransport("curl")) {
            try LaunchOptions(arguments: ["--transport", "curl"], processEnvironment: [:])
        }
        #expect(throws: LaunchError.missingValue("--transport")) {
            try LaunchOptions(arguments: ["--transport"], processEnvironment: [:])
        }
    }

    @Test func theEnvironmentVariableChoosesAndTheFlagWins() throws {
        let variable = ["STRATA_ENVIRONMENT": "staging"]
        #expect(try LaunchOptions(arguments: [], processEnvironment: variable).environment == .staging)
        #expect(
            try LaunchOptions(arguments: ["--env", "production"], processEnvironment: variable).environment
                == .production)
        #expect(try LaunchOptions(arguments: ["--env=local", "-v"], processEnvironment: variable).verbose)
    }

    @Test func badCommandLinesAreClearErrors() {
        #expect(throws: LaunchError.unknownEnvironment("qa")) {
            try LaunchOptions(arguments: ["--env", "qa"], processEnvironment: [:])
        }
        #expect(throws: LaunchError.unknownEnvironment("qa")) {
            try LaunchOptions(arguments: [], processEnvironment: ["STRATA_ENVIRONMENT": "qa"])
        }
        #expect(throws: LaunchError.missingValue("--env")) {
            try LaunchOptions(arguments: ["--env"], processEnvironment: [:])
        }
        #expect(throws: LaunchError.unknownArgument("--fast")) {
            try LaunchOptions(arguments: ["--fast"], processEnvironment: [:])
        }
    }
}
