/// A type that can be read from one command-line word: options and arguments of this type are
/// parsed once, in the type, and a word it rejects is a usage error (exit code 64).
public protocol ExpressibleByArgument {
    /// Parses `argument`, or returns `nil` when it is not a valid value.
    init?(argument: String)
    /// What the value may be, such as `an integer` or `one of best, worst`.
    static var valueDescription: String { get }
    /// The words a shell offers for the value (`streamkit completions`); empty when the value is
    /// free (then files are offered).
    static var completionValues: [String] { get }
    /// How help shows this value as a default: `(default: best)`.
    var defaultValueDescription: String { get }
    /// The usage error for `argument`, which `init(argument:)` rejected, given for `name`
    /// (`--variant`, `<url>`).
    static func invalidValueMessage(_ argument: String, for name: String) -> String
}

extension ExpressibleByArgument {
    public static var valueDescription: String { "a value" }

    public static var completionValues: [String] { [] }

    public var defaultValueDescription: String { "\(self)" }

    public static func invalidValueMessage(_ argument: String, for name: String) -> String {
        "invalid value '\(argument)' for \(name): expected \(valueDescription)"
    }
}

extension String: ExpressibleByArgument {
    public init?(argument: String) { self = argument }
    public static var valueDescription: String { "text" }
}

extension Int: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static var valueDescription: String { "an integer" }
}

extension Int64: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument, radix: 10) }
    public static var valueDescription: String { "an integer" }
}

extension Double: ExpressibleByArgument {
    public init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self = value
    }
    public static var valueDescription: String { "a number" }
}

extension ExpressibleByArgument where Self: RawRepresentable, RawValue == String, Self: CaseIterable {
    public init?(argument: String) { self.init(rawValue: argument) }
    public static var valueDescription: String { "one of " + allCases.map(\.rawValue).joined(separator: ", ") }
    public static var completionValues: [String] { allCases.map(\.rawValue) }
}
