/// Finds the subcommand a command line names, parses it, runs it, and turns the outcome into an
/// exit code, printing usage errors and failures to standard error.
public enum CommandRunner {
    /// Runs the command line `arguments` (without the program name) against `root`.
    ///
    /// - Returns: The exit code: 0, the code a command threw, 1 for any other error, 64 for usage.
    public static func run(
        _ root: any ParsableCommand.Type, arguments: [String], context: CommandContext
    ) async -> ExitCode {
        let programName = root.configuration.commandName
        var type = root
        var path = [programName]
        var words = arguments[...]

        // `streamkit help [command ...]` is help for that command.
        if words.first == "help"
            && !root.configuration.subcommands.contains(where: { $0.configuration.commandName == "help" })
        {
            words = words.dropFirst()
            while let word = words.first {
                guard
                    let subcommand = type.configuration.subcommands.first(where: {
                        $0.configuration.commandName == word
                    })
                else {
                    return usageFailure(
                        UsageError("unknown command '\(word)'", commandPath: path), type: type, context: context)
                }
                type = subcommand
                path.append(word)
                words = words.dropFirst()
            }
            context.write(HelpFormatter.help(for: type, path: path, width: HelpFormatter.width(for: context)))
            return .success
        }

        while let word = words.first, !word.hasPrefix("-") {
            guard let subcommand = type.configuration.subcommands.first(where: { $0.configuration.commandName == word })
            else { break }
            type = subcommand
            path.append(word)
            words = words.dropFirst()
        }

        let optionWords = words.prefix { $0 != "--" }
        if optionWords.contains("--help") || optionWords.contains("-h") {
            context.write(HelpFormatter.help(for: type, path: path, width: HelpFormatter.width(for: context)))
            return .success
        }
        if let version = type.configuration.version, optionWords.contains("--version") {
            context.write("\(version)\n")
            return .success
        }
        if !type.configuration.subcommands.isEmpty, let word = words.first {
            if !word.hasPrefix("-") {
                return usageFailure(
                    UsageError("unknown command '\(word)'", commandPath: path), type: type, context: context)
            }
        }

        let command: any ParsableCommand
        do {
            command = try CommandParser.parse(type, words: Array(words), path: path)
        } catch let error as UsageError {
            return usageFailure(error, type: type, context: context)
        } catch let error as ValidationError {
            return usageFailure(UsageError(error.message, commandPath: path), type: type, context: context)
        } catch {
            context.writeError("error: \(error)\n")
            return .failure
        }

        do {
            try await command.run(context)
            return .success
        } catch let code as ExitCode {
            return code
        } catch let error as ValidationError {
            return usageFailure(UsageError(error.message, commandPath: path), type: type, context: context)
        } catch {
            context.writeError("error: \(error)\n")
            return .failure
        }
    }

    private static func usageFailure(
        _ error: UsageError, type: any ParsableCommand.Type, context: CommandContext
    ) -> ExitCode {
        let path = error.commandPath
        context.writeError("error: \(error.message)\n")
        context.writeError("usage: \(HelpFormatter.usage(for: type, path: path))\n")
        context.writeError("See '\(([path[0], "help"] + path.dropFirst()).joined(separator: " "))' for more.\n")
        return .usage
    }
}
