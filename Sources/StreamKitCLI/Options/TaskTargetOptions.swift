/// `[ID|--all]`: the queue task a command acts on, or every task it applies to.
struct TaskTargetOptions: ParsableArguments {
    @Argument(valueName: "id", completion: .taskIDs, help: "The task id.") var id: String?
    @Flag(help: "Every task.") var all = false

    init() {}

    /// `--all` with help saying which tasks it takes.
    init(allHelp: String) { _all = _all.withHelp(allHelp) }

    mutating func validate() throws {
        guard (id == nil) != !all else { throw ValidationError("give a task <id> or --all, not both or neither") }
    }

    /// The task named, or `nil` for all of them.
    var task: String? { all ? nil : id }
}
