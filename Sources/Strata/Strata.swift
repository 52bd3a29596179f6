// Strata: a callback-based, layered networking framework.
//
// Importing `Strata` imports every layer: configuration, encodings, endpoints, the session manager,
// the network service and the data-transfer service. Import a single layer's module instead to
// depend on less. Test doubles live in `StrataTesting`, which is not re-exported.

@_exported import StrataConfiguration
@_exported import StrataCore
@_exported import StrataEncoding
@_exported import StrataEndpoint
@_exported import StrataService
@_exported import StrataSession
@_exported import StrataTransfer
