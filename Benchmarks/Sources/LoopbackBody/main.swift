// Writes the body the loopback pairs' server answers `GET /items` with (`StackOverhead.body`) to
// standard output, for a server of another process to serve: `scripts/bench-nginx.sh` gives it to
// nginx.

import Foundation
import StackFixture

FileHandle.standardOutput.write(StackOverhead.body)
