import StreamKitCLI

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process entry point: parse the command line, run the command, exit with its code.
@main
enum StreamKitMain {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let code = await CommandRunner.run(StreamKitCommand.self, arguments: arguments, context: .process)
        exit(code.rawValue)
    }
}
