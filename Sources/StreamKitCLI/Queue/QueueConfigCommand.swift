import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue config [--download-dir DIR] [--max-concurrent N] [--autostart on|off] ...`.
struct QueueConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the queue's settings, or change them.",
        discussion: """
            With no option, prints the settings. Each option changes one, saved in the queue for every later \
            run (while `queue run` holds the queue, it makes the change). --download-dir applies to tasks \
            added afterwards; existing tasks stay where they are.
            """,
        examples: [
            .init("See the settings", "streamkit queue config"),
            .init(
                "Three at a time, new tasks start at once", "streamkit queue config --max-concurrent 3 --autostart on"),
        ])

    @Option(name: "download-dir", valueName: "dir", help: "Where new tasks are stored.") var downloadDirectory: String?
    @Option(valueName: "n", help: "Tasks at once, 1 to 16.") var maxConcurrent: Int?
    @Option(valueName: "on|off", help: "Whether added tasks start at once.") var autostart: Switch?
    @Option(
        valueName: "rate",
        help: "At most this many bytes a second for all tasks, such as 500k or 2M; 0 for no limit.")
    var limitRate: String?
    @Option(valueName: "on|off", help: "Whether tasks may run while the route to their origin is cellular.")
    var cellular: Switch?
    @Flag(name: "no-cellular", help: "The same as --cellular off.") var noCellular = false
    @Option(
        name: "free-space-floor", valueName: "size",
        help:
            "The free space a task's file system must keep for it to start, such as 1G; auto for the smaller of 256M and 1%."
    )
    var freeSpaceFloor: String?
    @OptionGroup var home: HomeOptions
    @OptionGroup var format = JSONOutputOptions(help: "Print the settings as one JSON object.")

    init() {}

    mutating func validate() throws {
        if let freeSpaceFloor, freeSpaceFloor != "auto", freeSpaceFloor != "0",
            ByteSize(argument: freeSpaceFloor) == nil
        {
            throw ValidationError(
                "invalid value '\(freeSpaceFloor)' for --free-space-floor: expected \(ByteSize.valueDescription), 0 or auto"
            )
        }
        if let maxConcurrent, !(1...16).contains(maxConcurrent) {
            throw ValidationError("--max-concurrent must be between 1 and 16, got \(maxConcurrent)")
        }
        if noCellular, cellular == .on { throw ValidationError("--no-cellular contradicts --cellular on") }
        if let limitRate, limitRate != "0", TransferRate(argument: limitRate) == nil {
            throw ValidationError(
                "invalid value '\(limitRate)' for --limit-rate: expected \(TransferRate.valueDescription) or 0")
        }
    }

    func run(_ context: CommandContext) async throws {
        var change = DownloadQueueSettings(
            maximumConcurrentDownloads: maxConcurrent, autoStart: autostart.map { $0 == .on })
        if let downloadDirectory {
            change.downloadDirectory =
                URL(
                    fileURLWithPath: downloadDirectory,
                    relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
                ).standardizedFileURL.path
        }
        if let limitRate {
            change.bandwidthLimit = limitRate == "0" ? 0 : TransferRate(argument: limitRate)?.bytesPerSecond
        }
        change.allowsCellularAccess = noCellular ? false : cellular.map { $0 == .on }
        if let freeSpaceFloor {
            change.freeSpaceFloor =
                switch freeSpaceFloor {
                case "auto": -1
                case "0": 0
                default: ByteSize(argument: freeSpaceFloor)?.bytes
                }
        }
        let answer = try await QueueAccess.perform(.configure(change), home: home, context: context)
        if let error = answer.error {
            context.writeError("error: \(error)\n")
            throw ExitCode.failure
        }
        guard let settings = answer.settings else { throw ExitCode.failure }
        if format.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            context.write(String(decoding: (try? encoder.encode(settings)) ?? Data("{}".utf8), as: UTF8.self) + "\n")
            return
        }
        let limit = settings.bandwidthLimit.map { ByteCountText.format(Double($0)) + "/s" } ?? "none"
        let floor = settings.freeSpaceFloor.map { ByteCountText.format(Double($0)) } ?? "auto (256.0 MB or 1%)"
        context.write(
            """
            download directory  \(settings.downloadDirectory ?? "?")
            max concurrent      \(settings.maximumConcurrentDownloads ?? 1)
            autostart           \(settings.autoStart == true ? "on" : "off")
            bandwidth limit     \(limit)
            cellular            \(settings.allowsCellularAccess == false ? "off" : "on")
            free space floor    \(floor)

            """)
    }

    /// `on` or `off`.
    enum Switch: String, CaseIterable, ExpressibleByArgument {
        case on, off
    }
}
