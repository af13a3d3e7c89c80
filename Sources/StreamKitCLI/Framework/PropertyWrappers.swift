/// Reads the words given for one argument into its value while decoding a command.
typealias WordsParser<Value> = (_ words: [String], _ definition: ArgumentDefinition) throws -> Value?

/// Restores a declared wrapper from the command's default instance and fills in its value.
private func decodeWrapper<Wrapper: ArgumentDeclaration>(
    _ type: Wrapper.Type, from decoder: any Decoder, fill: (inout Wrapper, [String]) throws -> Void
) throws -> Wrapper {
    guard let argumentDecoder = decoder as? ArgumentValueDecoder,
        var wrapper = argumentDecoder.prototype as? Wrapper
    else {
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "argument wrappers decode only from a command line")
        )
    }
    wrapper.definition = argumentDecoder.definition
    try fill(&wrapper, argumentDecoder.words)
    return wrapper
}

/// A named option with a value: `--variant best`, `--variant=best`, `-j 8`.
///
/// Declare it with a default (`var jobs = 8`), as optional (`var variant: String?`), as
/// repeatable (`var header: [String] = []`), or required (no default).
@propertyWrapper
public struct Option<Value>: Decodable, ArgumentDeclaration {
    var definition: ArgumentDefinition
    private let parse: WordsParser<Value>
    private var storage: Value?

    public var wrappedValue: Value {
        get {
            guard let storage else { fatalError("option \(definition.displayName) read before parsing") }
            return storage
        }
        set { storage = newValue }
    }

    public init(from decoder: any Decoder) throws {
        self = try decodeWrapper(Self.self, from: decoder) { wrapper, words in
            if let value = try wrapper.parse(words, wrapper.definition) { wrapper.storage = value }
        }
    }
}

extension Option where Value: ExpressibleByArgument {
    /// An option with a default value.
    public init(
        wrappedValue: Value, name long: String? = nil, short: Character? = nil, valueName: String? = nil, help: String
    ) {
        definition = ArgumentDefinition(
            kind: .option, longName: long, shortName: short, help: help, valueName: valueName, isRequired: false,
            isRepeating: false, defaultDescription: wrappedValue.defaultValueDescription,
            valueDescription: Value.valueDescription, completionValues: Value.completionValues)
        parse = { words, definition in try words.last.map { try parseValue($0, for: definition) } }
        storage = wrappedValue
    }

    /// An option that must be given.
    public init(name long: String? = nil, short: Character? = nil, valueName: String? = nil, help: String) {
        definition = ArgumentDefinition(
            kind: .option, longName: long, shortName: short, help: help, valueName: valueName, isRequired: true,
            isRepeating: false, valueDescription: Value.valueDescription, completionValues: Value.completionValues)
        parse = { words, definition in try words.last.map { try parseValue($0, for: definition) } }
        storage = nil
    }
}

extension Option {
    /// An option that may be left out, reading `nil` when it is.
    public init<Wrapped: ExpressibleByArgument>(
        name long: String? = nil, short: Character? = nil, valueName: String? = nil, help: String
    ) where Value == Wrapped? {
        definition = ArgumentDefinition(
            kind: .option, longName: long, shortName: short, help: help, valueName: valueName, isRequired: false,
            isRepeating: false, valueDescription: Wrapped.valueDescription, completionValues: Wrapped.completionValues)
        parse = { words, definition in
            guard let word = words.last else { return nil }
            return .some(try parseValue(word, for: definition) as Wrapped)
        }
        storage = .some(nil)
    }

    /// An option that may be given several times, collecting every value in order.
    public init<Element: ExpressibleByArgument>(
        wrappedValue: [Element] = [], name long: String? = nil, short: Character? = nil, valueName: String? = nil,
        help: String
    ) where Value == [Element] {
        definition = ArgumentDefinition(
            kind: .option, longName: long, shortName: short, help: help, valueName: valueName, isRequired: false,
            isRepeating: true, valueDescription: Element.valueDescription, completionValues: Element.completionValues)
        parse = { words, definition in
            words.isEmpty ? nil : try words.map { try parseValue($0, for: definition) as Element }
        }
        storage = wrappedValue
    }
}

extension Option {
    /// The same declaration with other help, for a command that words a shared option its own way.
    func withHelp(_ help: String) -> Self {
        var option = self
        option.definition.help = help
        return option
    }

    /// This declaration left out of the command: neither parsed nor shown in help, it keeps its
    /// default. For an ``OptionGroup`` member that one of the commands sharing the group lacks.
    func omitted() -> Self {
        var option = self
        option.definition.isOmitted = true
        return option
    }
}

/// A named switch with no value: `--json`; short ones combine, `-vq` being `-v -q`.
@propertyWrapper
public struct Flag: Decodable, ArgumentDeclaration {
    var definition: ArgumentDefinition
    /// Whether the flag was given.
    public var wrappedValue: Bool

    /// A flag, off unless given.
    public init(wrappedValue: Bool = false, name long: String? = nil, short: Character? = nil, help: String) {
        definition = ArgumentDefinition(
            kind: .flag, longName: long, shortName: short, help: help, isRequired: false, isRepeating: false,
            valueDescription: "")
        self.wrappedValue = wrappedValue
    }

    public init(from decoder: any Decoder) throws {
        self = try decodeWrapper(Self.self, from: decoder) { wrapper, words in
            if !words.isEmpty { wrapper.wrappedValue = true }
        }
    }

    /// The same declaration with other help, for a command that words a shared flag its own way.
    func withHelp(_ help: String) -> Self {
        var flag = self
        flag.definition.help = help
        return flag
    }
}

/// A positional argument, matched by order: `streamkit inspect <source>`.
@propertyWrapper
public struct Argument<Value>: Decodable, ArgumentDeclaration {
    var definition: ArgumentDefinition
    private let parse: WordsParser<Value>
    private var storage: Value?

    public var wrappedValue: Value {
        get {
            guard let storage else { fatalError("argument \(definition.displayName) read before parsing") }
            return storage
        }
        set { storage = newValue }
    }

    public init(from decoder: any Decoder) throws {
        self = try decodeWrapper(Self.self, from: decoder) { wrapper, words in
            if let value = try wrapper.parse(words, wrapper.definition) { wrapper.storage = value }
        }
    }
}

extension Argument where Value: ExpressibleByArgument {
    /// A positional argument that must be given.
    public init(valueName: String? = nil, completion: ArgumentCompletion = .files, help: String) {
        definition = ArgumentDefinition(
            kind: .positional, help: help, valueName: valueName, isRequired: true, isRepeating: false,
            valueDescription: Value.valueDescription, completionValues: Value.completionValues, completion: completion)
        parse = { words, definition in try words.last.map { try parseValue($0, for: definition) } }
        storage = nil
    }

    /// A positional argument with a default value.
    public init(wrappedValue: Value, valueName: String? = nil, help: String) {
        definition = ArgumentDefinition(
            kind: .positional, help: help, valueName: valueName, isRequired: false, isRepeating: false,
            defaultDescription: wrappedValue.defaultValueDescription, valueDescription: Value.valueDescription,
            completionValues: Value.completionValues)
        parse = { words, definition in try words.last.map { try parseValue($0, for: definition) } }
        storage = wrappedValue
    }
}

extension Argument {
    /// A positional argument that may be left out.
    public init<Wrapped: ExpressibleByArgument>(
        valueName: String? = nil, completion: ArgumentCompletion = .files, help: String
    ) where Value == Wrapped? {
        definition = ArgumentDefinition(
            kind: .positional, help: help, valueName: valueName, isRequired: false, isRepeating: false,
            valueDescription: Wrapped.valueDescription, completionValues: Wrapped.completionValues,
            completion: completion)
        parse = { words, definition in
            guard let word = words.last else { return nil }
            return .some(try parseValue(word, for: definition) as Wrapped)
        }
        storage = .some(nil)
    }

    /// Every remaining positional word.
    public init<Element: ExpressibleByArgument>(
        wrappedValue: [Element] = [], valueName: String? = nil, help: String
    ) where Value == [Element] {
        definition = ArgumentDefinition(
            kind: .positional, help: help, valueName: valueName, isRequired: false, isRepeating: true,
            valueDescription: Element.valueDescription, completionValues: Element.completionValues)
        parse = { words, definition in
            words.isEmpty ? nil : try words.map { try parseValue($0, for: definition) as Element }
        }
        storage = wrappedValue
    }
}
