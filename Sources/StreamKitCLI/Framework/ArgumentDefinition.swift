/// What the parser and the help formatter know about one declared argument.
struct ArgumentDefinition: Sendable {
    enum Kind: Sendable { case positional, option, flag }

    var kind: Kind
    /// The property name, which is also the decoding key.
    var key: String = ""
    /// The property's place in the command: its key after the keys of the option groups holding
    /// it (`selection.variant`), unique in the command.
    var id: String = ""
    /// `--long` name without dashes; derived from the property name when not given.
    var longName: String?
    var shortName: Character?
    var help: String
    var valueName: String?
    var isRequired: Bool
    var isRepeating: Bool
    var defaultDescription: String?
    var valueDescription: String
    /// The words a shell offers for the value (the value type's ``ExpressibleByArgument/completionValues``).
    var completionValues: [String] = []
    /// What a shell offers for the value when there is no list of words.
    var completion: ArgumentCompletion = .files
    /// Left out of this command by the option group declaring it: neither parsed nor shown.
    var isOmitted = false

    /// The name used in messages: `--limit-rate` for options, `<source>` for positionals.
    var displayName: String {
        switch kind {
        case .positional: "<\(resolvedValueName)>"
        case .option, .flag: "--\(resolvedLongName)"
        }
    }

    var resolvedLongName: String { longName ?? Self.kebabCase(key) }
    var resolvedValueName: String { valueName ?? (kind == .option ? resolvedLongName : Self.kebabCase(key)) }

    /// `limitRate` → `limit-rate`.
    static func kebabCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                if !result.isEmpty { result.append("-") }
                result.append(contentsOf: character.lowercased())
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// What a shell offers for a value that has no list of words (`streamkit completions`).
public enum ArgumentCompletion: Sendable, Hashable {
    /// Files and folders.
    case files
    /// The ids of the queue's tasks (`streamkit queue list --ids`).
    case taskIDs
}

/// A property wrapper that declares a command-line argument.
protocol ArgumentDeclaration {
    var definition: ArgumentDefinition { get set }
}

/// Why a declared argument's words could not become a value.
struct ArgumentValueFailure: Error {
    let message: String
}

/// Parses words into `Value`, reporting the argument by name.
func parseValue<Value: ExpressibleByArgument>(_ word: String, for definition: ArgumentDefinition) throws -> Value {
    guard let value = Value(argument: word) else {
        throw ArgumentValueFailure(message: Value.invalidValueMessage(word, for: definition.displayName))
    }
    return value
}
