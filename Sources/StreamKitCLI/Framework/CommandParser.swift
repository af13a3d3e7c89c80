/// Turns the words after a command's name into a filled-in command value.
enum CommandParser {
    /// The arguments a command type declares, in declaration order, option groups' in place.
    static func definitions(of type: any ParsableCommand.Type) -> [ArgumentDefinition] {
        declarations(in: type.init()).map(\.definition).filter { !$0.isOmitted }
    }

    /// Parses `words` into a command of type `type`, then validates its option groups and it.
    ///
    /// - Throws: ``UsageError`` naming the bad argument; whatever `validate()` throws.
    static func parse(
        _ type: any ParsableCommand.Type, words: [String], path: [String]
    ) throws -> any ParsableCommand {
        let prototype = type.init()
        let definitions = declarations(in: prototype).map(\.definition).filter { !$0.isOmitted }
        let assigned = try assign(words, to: definitions, path: path)
        var command: any ParsableCommand
        do {
            command = try type.init(from: decoder(for: prototype, path: [], assigned: assigned))
        } catch let failure as ArgumentValueFailure {
            throw UsageError(failure.message, commandPath: path)
        }
        for definition in definitions where definition.isRequired && assigned[definition.id] == nil {
            let what = definition.kind == .positional ? "argument" : "option"
            throw UsageError("missing \(what) \(definition.displayName)", commandPath: path)
        }
        try validateGroups(in: command)
        try command.validate()
        return command
    }

    /// Runs the `validate()` of the option groups `arguments` holds.
    static func validateGroups(in arguments: any ParsableArguments) throws {
        for child in Mirror(reflecting: arguments).children {
            if let group = child.value as? any ArgumentGroupDeclaration { try group.validateGroup() }
        }
    }

    // MARK: Private

    private struct Declaration {
        var definition: ArgumentDefinition
        var wrapper: any ArgumentDeclaration
    }

    /// The property key of a wrapper's storage (`_jobs` → `jobs`).
    private static func key(_ label: String) -> String {
        label.hasPrefix("_") ? String(label.dropFirst()) : label
    }

    /// Every argument `arguments` declares, its option groups' in place, with keys and ids set.
    private static func declarations(in arguments: any ParsableArguments, path: [String] = []) -> [Declaration] {
        Mirror(reflecting: arguments).children.flatMap { child -> [Declaration] in
            guard let label = child.label else { return [] }
            if let group = child.value as? any ArgumentGroupDeclaration {
                return declarations(in: group.prototype, path: path + [key(label)])
            }
            guard let wrapper = child.value as? any ArgumentDeclaration else { return [] }
            var definition = wrapper.definition
            definition.key = key(label)
            definition.id = (path + [definition.key]).joined(separator: ".")
            return [Declaration(definition: definition, wrapper: wrapper)]
        }
    }

    /// A decoder handing each wrapper of `arguments` its prototype and words, and each option
    /// group a decoder of its own.
    private static func decoder(
        for arguments: any ParsableArguments, path: [String], assigned: [String: [String]]
    ) -> CommandDecoder {
        var values: [String: any Decoder] = [:]
        for child in Mirror(reflecting: arguments).children {
            guard let label = child.label else { continue }
            let key = key(label)
            if let group = child.value as? any ArgumentGroupDeclaration {
                values[key] = ArgumentGroupDecoder(
                    members: decoder(for: group.prototype, path: path + [key], assigned: assigned))
            } else if let wrapper = child.value as? any ArgumentDeclaration {
                var definition = wrapper.definition
                definition.key = key
                definition.id = (path + [key]).joined(separator: ".")
                values[key] = ArgumentValueDecoder(
                    prototype: wrapper, definition: definition, words: assigned[definition.id] ?? [])
            }
        }
        return CommandDecoder(values: values)
    }

    /// Matches words to declared arguments: options by name, positionals by order.
    private static func assign(
        _ words: [String], to definitions: [ArgumentDefinition], path: [String]
    ) throws(UsageError) -> [String: [String]] {
        var assigned: [String: [String]] = [:]
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false
        func named(_ predicate: (ArgumentDefinition) -> Bool) -> ArgumentDefinition? {
            definitions.first { $0.kind != .positional && predicate($0) }
        }
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") || isNegativeNumber(word) {
                positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            var inlineValue: String?
            let definition: ArgumentDefinition?
            if word.hasPrefix("--") {
                var name = String(word.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                definition = named { $0.resolvedLongName == name }
            } else {
                let short = word.dropFirst().first!
                let rest = word.dropFirst(2)
                if !rest.isEmpty { inlineValue = String(rest.hasPrefix("=") ? rest.dropFirst() : rest) }
                definition = named { $0.shortName == short }
            }
            guard let definition else {
                throw UsageError("unknown option '\(word)'", commandPath: path)
            }
            if !word.hasPrefix("--"), definition.kind == .flag, let inlineValue, !word.dropFirst(2).hasPrefix("=") {
                // `-vq` is `-v -q`: short flags combine; an option taking a value does not.
                for short in inlineValue {
                    guard let flag = named({ $0.shortName == short }) else {
                        throw UsageError("unknown option '-\(short)' in '\(word)'", commandPath: path)
                    }
                    guard flag.kind == .flag else {
                        throw UsageError(
                            "\(flag.displayName) takes a value; give it apart from '\(word)'", commandPath: path)
                    }
                    assigned[flag.id, default: []].append("true")
                }
                assigned[definition.id, default: []].append("true")
                continue
            }
            switch definition.kind {
            case .flag:
                if inlineValue != nil {
                    throw UsageError("\(definition.displayName) takes no value", commandPath: path)
                }
                assigned[definition.id, default: []].append("true")
            case .option:
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else if index < words.count {
                    value = words[index]
                    index += 1
                } else {
                    throw UsageError("missing value for \(definition.displayName)", commandPath: path)
                }
                if !definition.isRepeating, assigned[definition.id] != nil {
                    throw UsageError("\(definition.displayName) given more than once", commandPath: path)
                }
                assigned[definition.id, default: []].append(value)
            case .positional:
                preconditionFailure("named() never returns a positional")
            }
        }
        var remaining = positionals[...]
        for definition in definitions where definition.kind == .positional {
            if definition.isRepeating {
                if !remaining.isEmpty { assigned[definition.id] = Array(remaining) }
                remaining = []
            } else if let word = remaining.popFirst() {
                assigned[definition.id] = [word]
            }
        }
        if let extra = remaining.first {
            throw UsageError("unexpected argument '\(extra)'", commandPath: path)
        }
        return assigned
    }

    private static func isNegativeNumber(_ word: String) -> Bool {
        word.count > 1 && word.hasPrefix("-") && Double(word) != nil
    }
}

/// Decodes a command or option group type whose stored properties are all argument wrappers.
struct CommandDecoder: Decoder {
    let values: [String: any Decoder]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(CommandContainer<Key>(values: values))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw notAnArgument("unkeyed container") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw notAnArgument("single value container")
    }
}

/// Hands each property its wrapper's prototype and words; rejects properties that are not arguments.
private struct CommandContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let values: [String: any Decoder]
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { values.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let decoder = values[key.stringValue] else { throw notAnArgument(key.stringValue) }
        return try T(from: decoder)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { throw notAnArgument(key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { throw notAnArgument(key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { throw notAnArgument(key.stringValue) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { throw notAnArgument(key.stringValue) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { throw notAnArgument(key.stringValue) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { throw notAnArgument(key.stringValue) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { throw notAnArgument(key.stringValue) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { throw notAnArgument(key.stringValue) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { throw notAnArgument(key.stringValue) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { throw notAnArgument(key.stringValue) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { throw notAnArgument(key.stringValue) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { throw notAnArgument(key.stringValue) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { throw notAnArgument(key.stringValue) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { throw notAnArgument(key.stringValue) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> { throw notAnArgument(key.stringValue) }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw notAnArgument(key.stringValue)
    }
    func superDecoder() throws -> any Decoder { throw notAnArgument("super") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw notAnArgument(key.stringValue) }
}

/// The decoder one argument wrapper sees: its default instance and the words given for it.
struct ArgumentValueDecoder: ContainerlessDecoder {
    let prototype: any ArgumentDeclaration
    let definition: ArgumentDefinition
    let words: [String]
}

/// The decoder an ``OptionGroup`` sees: a decoder for its group type's members.
struct ArgumentGroupDecoder: ContainerlessDecoder {
    let members: CommandDecoder
}

/// A decoder that only carries what a wrapper reads from it directly, and has no containers.
protocol ContainerlessDecoder: Decoder {}

extension ContainerlessDecoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw notAnArgument("keyed container")
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw notAnArgument("unkeyed container") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw notAnArgument("single value container")
    }
}

private func notAnArgument(_ name: String) -> DecodingError {
    DecodingError.dataCorrupted(
        .init(
            codingPath: [], debugDescription: "'\(name)' is not declared with @Argument, @Option, @Flag or @OptionGroup"
        ))
}
