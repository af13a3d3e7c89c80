/// Options several commands share, declared once in a ``ParsableArguments`` type and included in
/// each command with `@OptionGroup var home: HomeOptions`.
///
/// The group's options appear where the group is declared, in help as on the command line. A
/// group given a value (`@OptionGroup var output = JSONOutputOptions(help: "…")`) takes its
/// declarations from that value, so a command can word an option's help its own way. The group's
/// `validate()` runs after parsing, before the command's; it checks, and what it changes is not
/// kept.
@propertyWrapper
public struct OptionGroup<Group: ParsableArguments>: Decodable, ArgumentGroupDeclaration {
    /// The parsed group (the declarations, before parsing).
    public var wrappedValue: Group

    /// The group as its `init()` declares it.
    public init() { wrappedValue = Group() }

    /// The group as `wrappedValue` declares it.
    public init(wrappedValue: Group) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        guard let groupDecoder = decoder as? ArgumentGroupDecoder else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "option groups decode only from a command line")
            )
        }
        wrappedValue = try Group(from: groupDecoder.members)
    }

    var prototype: any ParsableArguments { wrappedValue }

    func validateGroup() throws {
        try CommandParser.validateGroups(in: wrappedValue)
        var group = wrappedValue
        try group.validate()
    }
}

/// A property wrapper that includes a group of argument declarations.
protocol ArgumentGroupDeclaration {
    /// The instance whose declarations the group contributes.
    var prototype: any ParsableArguments { get }
    /// Runs the group's `validate()`, and its own groups' first.
    func validateGroup() throws
}
