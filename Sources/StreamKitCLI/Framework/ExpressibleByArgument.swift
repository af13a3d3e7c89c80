/// A type that can be read from one command-line word.
public protocol ExpressibleByArgument {
    /// Parses `argument`, or returns `nil` when it is not a valid value.
    init?(argument: String)
    /// What help says the value may be, such as `an integer` or `best|worst`.
    static var valueDescription: String { get }
}

extension ExpressibleByArgument {
    public static var valueDescription: String { "a value" }
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
}
