// The example's entry point; everything else lives in ShopApp so tests can reach it.

import Foundation
import ShopApp

exit(
    await ExampleApp.main(
        arguments: Array(CommandLine.arguments.dropFirst()), processEnvironment: ProcessInfo.processInfo.environment))
