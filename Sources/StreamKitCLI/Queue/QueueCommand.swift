import Foundation
import StreamKitCore
import StreamKitDownloads

/// `streamkit queue`: the persistent download queue in $STREAMKIT_HOME.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Keep a persistent download queue: add, list, start, stop, remove, and run it.",
        discussion: """
            The queue lives in $STREAMKIT_HOME (queue.sqlite; downloads in library/ID). `queue run` runs it \
            in the foreground and holds its lock; while it runs, the other queue commands hand their change \
            to it and print its answer. Tasks that were running when a run was killed come back ready and \
            resume without fetching again what was saved.
            """,
        examples: [
            .init(
                "Queue a stream and a file, then run the queue",
                "streamkit queue add URL --title Show && streamkit queue run --exit-when-done"),
            .init("See the queue", "streamkit queue list"),
        ],
        subcommands: [
            QueueAddCommand.self, QueueListCommand.self, QueueInfoCommand.self, QueueStartCommand.self,
            QueueStopCommand.self, QueueRetryCommand.self, QueueRemoveCommand.self, QueueRunCommand.self,
            QueueConfigCommand.self, QueueRepairCommand.self,
        ],
        group: "Downloads")

    init() {}
}
