import Foundation
import StrataConfiguration
import StrataCore
import Testing

@Suite struct NetworkConfigurationTests {
    @Test func defaultsAreNoHeadersNoQueryAndSixtySeconds() throws {
        let configuration = NetworkConfiguration(baseURL: try #require(URL(string: "https://api.example.com")))
        #expect(configuration.headers.isEmpty)
        #expect(configuration.queryParameters.isEmpty)
        #expect(configuration.timeoutInterval == 60)
    }
}

@Suite struct NetworkEnvironmentsTests {
    let environments = NetworkEnvironments(
        [
            .development: .init(baseURL: "http://localhost:8080", headers: ["X-Env": "dev"]),
            .staging: .init(
                baseURL: "https://staging.example.com/api", queryParameters: ["debug": true], timeoutInterval: 15),
            .production: .init(baseURL: "https://api.example.com"),
            .custom("broken"): .init(baseURL: "not a url"),
            .custom("ftp"): .init(baseURL: "ftp://files.example.com"),
            .custom("hostless"): .init(baseURL: "https://"),
        ]
    )

    @Test func eachEnvironmentHasItsOwnBaseURLHeadersQueryAndTimeout() throws {
        let staging = try environments.configuration(for: .staging)
        #expect(staging.baseURL.absoluteString == "https://staging.example.com/api")
        #expect(staging.queryParameters == ["debug": true])
        #expect(staging.timeoutInterval == 15)
        let development = try environments.configuration(for: .development)
        #expect(development.headers["x-env"] == "dev")
        #expect(development.timeoutInterval == NetworkConfiguration.defaultTimeoutInterval)
    }

    @Test func anUndefinedEnvironmentIsAClearError() {
        #expect(throws: ConfigurationError.self) { try environments.configuration(for: .custom("qa")) }
        do {
            _ = try environments.configuration(for: "qa")
        } catch {
            guard case .undefinedEnvironment(let name, let available) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(name == "qa")
            #expect(available.contains(.production))
            #expect(error.errorDescription?.contains("'qa'") == true)
        }
    }

    @Test(arguments: ["broken", "ftp", "hostless"])
    func anInvalidBaseURLNamesTheEnvironmentAndTheValue(name: String) {
        do {
            _ = try environments.configuration(for: NetworkEnvironment(name))
            Issue.record("expected an error")
        } catch {
            #expect(
                error
                    == .invalidBaseURL(
                        environment: NetworkEnvironment(name),
                        value: environments.settings[NetworkEnvironment(name)]?.baseURL ?? ""))
            #expect(error.errorDescription?.contains(name) == true)
        }
    }

    @Test func theProcessEnvironmentVariableChoosesTheEnvironment() throws {
        let configuration = try environments.selectedConfiguration(processEnvironment: [
            "STRATA_ENVIRONMENT": "production"
        ])
        #expect(configuration.baseURL.host == "api.example.com")
        let custom = try environments.selectedConfiguration(
            variableName: "APP_ENV", processEnvironment: ["APP_ENV": " staging \n"])
        #expect(custom.baseURL.host == "staging.example.com")
    }

    @Test func anUnsetOrEmptyVariableFallsBackToTheDefaultEnvironment() {
        #expect(environments.selectedEnvironment(processEnvironment: [:]) == .development)
        #expect(environments.selectedEnvironment(processEnvironment: ["STRATA_ENVIRONMENT": ""]) == .development)
        var production = environments
        production.defaultEnvironment = .production
        #expect(production.selectedEnvironment(processEnvironment: [:]) == .production)
    }

    @Test func aChosenEnvironmentWithAnInvalidURLFailsWithItsName() {
        #expect(throws: ConfigurationError.invalidBaseURL(environment: "broken", value: "not a url")) {
            try environments.selectedConfiguration(processEnvironment: ["STRATA_ENVIRONMENT": "broken"])
        }
    }
}

@Suite struct ConfigurationFileTests {
    private func write(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func loadsEnvironmentsAndTheChosenOneFromAJSONFile() throws {
        let url = try write(
            """
            {
              "environment": "staging",
              "environments": {
                "development": { "baseURL": "http://localhost:8080" },
                "staging": { "baseURL": "https://staging.example.com", "headers": { "X-Env": "staging" },
                             "queryParameters": { "v": 2 }, "timeoutInterval": 5 }
              }
            }
            """
        )
        defer { try? FileManager.default.removeItem(at: url) }
        let environments = try NetworkEnvironments.load(contentsOf: url)
        #expect(environments.defaultEnvironment == .staging)
        let configuration = try environments.selectedConfiguration(processEnvironment: [:])
        #expect(configuration.baseURL.host == "staging.example.com")
        #expect(configuration.headers["X-Env"] == "staging")
        #expect(configuration.queryParameters == ["v": 2])
        #expect(configuration.timeoutInterval == 5)
        let overridden = try environments.selectedConfiguration(processEnvironment: [
            "STRATA_ENVIRONMENT": "development"
        ])
        #expect(overridden.baseURL.port == 8080)
    }

    @Test func aFileWithoutAChoiceUsesTheFallback() throws {
        let url = try write(#"{"environments": {"production": {"baseURL": "https://api.example.com"}}}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try NetworkEnvironments.load(contentsOf: url, fallback: .production).defaultEnvironment == .production)
    }

    @Test func aMalformedFileIsAClearError() throws {
        let url = try write(#"{"environments": {"production": {"base": "https://api.example.com"}}}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            _ = try NetworkEnvironments.load(contentsOf: url)
            Issue.record("expected an error")
        } catch {
            guard case .malformedFile(let path, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == url.path)
            #expect(reason.contains("baseURL"))
        }
    }

    @Test func aMissingFileIsAClearError() {
        let url = URL(fileURLWithPath: "/nonexistent/strata-\(UUID().uuidString).json")
        do {
            _ = try NetworkEnvironments.load(contentsOf: url)
            Issue.record("expected an error")
        } catch {
            guard case .unreadableFile(let path, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == url.path)
        }
    }
}
