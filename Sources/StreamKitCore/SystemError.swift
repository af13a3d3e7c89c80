#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call, with the `errno` it set and what it was working on.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value.
    public let code: Int32
    /// The call that failed, such as `open`.
    public let operation: String
    /// The file, address or other subject of the call, when there is one.
    public let subject: String?

    /// Creates an error for `operation` with an explicit `errno` value.
    public init(code: Int32, operation: String, subject: String? = nil) {
        self.code = code
        self.operation = operation
        self.subject = subject
    }

    /// Creates an error for `operation` from the calling thread's current `errno`.
    public static func current(_ operation: String, subject: String? = nil) -> SystemError {
        SystemError(code: errno, operation: operation, subject: subject)
    }

    /// The system's text for the error code, such as "No such file or directory".
    public var reason: String { String(cString: strerror(code)) }

    public var description: String {
        if let subject { return "\(operation) \(subject): \(reason) (errno \(code))" }
        return "\(operation): \(reason) (errno \(code))"
    }
}
