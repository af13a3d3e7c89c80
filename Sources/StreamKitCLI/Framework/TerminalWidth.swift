#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The width of the terminal a command writes to.
enum TerminalWidth {
    /// The columns `TIOCGWINSZ` reports for the first of `descriptors` that is a terminal, else
    /// `$COLUMNS`, else 80.
    static func columns(of descriptors: [Int32], environment: [String: String]) -> Int {
        var size = winsize()
        for descriptor in descriptors where ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0 {
            if size.ws_col > 0 { return Int(size.ws_col) }
        }
        if let columns = environment["COLUMNS"].flatMap(Int.init), columns > 0 { return columns }
        return 80
    }
}
