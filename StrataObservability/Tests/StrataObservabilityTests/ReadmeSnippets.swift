import CoreMetrics
import Foundation
import Logging
import Strata
import StrataObservability
import Tracing

// The README's blocks on logging, metrics and tracing, compiled (DocumentationTests in the root
// package checks that each block appears here line for line).

enum Tenant {
    @TaskLocal static var current: String?
}

struct TenantMonitor: EventMonitor {
    func captureContext(into context: inout RequestContext) {
        guard let tenant = Tenant.current else { return }
        context.rebinding { body in Tenant.$current.withValue(tenant, operation: body) }
    }
}

enum ReadmeObservability {
    static func managerLogger(_ logger: Logger) -> SessionManager {
        let manager = SessionManager(monitors: [LoggingMonitor(logger: logger)])
        return manager
    }

    static func metrics() -> SessionManager {
        let measured = SessionManager(monitors: [MetricsMonitor(factory: MetricsSystem.factory)])
        return measured
    }

    static func tracing() -> SessionManager {
        let tracing = TracingMonitor(tracer: InstrumentationSystem.tracer)
        let traced = SessionManager(adapters: [tracing.injector], monitors: [tracing])
        return traced
    }

    static func requestLogger(_ requestLogger: Logger) -> Endpoint<Void> {
        var options = RequestOptions()
        options.logger = requestLogger
        let latest = Endpoint<Void>(path: "reports/latest", options: options)
        return latest
    }
}
