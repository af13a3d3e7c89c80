// bench-relay: a network link between a client and a server on 127.0.0.1, for bench/network.sh.
//
//   bench-relay UPSTREAM_PORT DELAY_MS [BYTES_PER_SECOND]
//
// Listens on an ephemeral port, prints it on one line, and relays every connection to
// 127.0.0.1:UPSTREAM_PORT with DELAY_MS added each way and, when given, each connection paced to
// BYTES_PER_SECOND in each direction (these kernels have no netem). Runs until killed; on
// SIGTERM it prints one JSON line: connections accepted, the most open at once, bytes relayed
// to clients.
import Foundation
import StreamKitTestSupport

#if canImport(Glibc)
import Glibc
#endif

@main
enum BenchRelay {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard (2...3).contains(arguments.count), let upstream = UInt16(arguments[0]),
            let delay = Int(arguments[1]), delay >= 0
        else {
            FileHandle.standardError.write(
                Data("usage: bench-relay UPSTREAM_PORT DELAY_MS [BYTES_PER_SECOND]\n".utf8))
            exit(64)
        }
        let rate = arguments.count == 3 ? Int(arguments[2]) : nil
        let relay = try TCPRelay(
            upstreamPort: upstream, link: RelayLink(delay: .milliseconds(delay), bytesPerSecond: rate))
        FileHandle.standardOutput.write(Data("\(relay.port)\n".utf8))
        signal(SIGTERM, SIG_IGN)
        let terminated = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
        terminated.setEventHandler {
            let line =
                "{\"connections\": \(relay.connectionCount), \"most_open\": \(relay.mostOpenConnections),"
                + " \"bytes_down\": \(relay.bytesDownstream)}\n"
            FileHandle.standardOutput.write(Data(line.utf8))
            exit(0)
        }
        terminated.resume()
        dispatchMain()
    }
}
