/// The manager's tasks by id, with the two orders it reads at every step kept as tasks change, so
/// that no step sorts the queue: every task in queue order, and the tasks the scheduler looks at
/// (being added, queued, running, waiting, stopping) in queue order.
///
/// Sorting every task at each scheduling step made a queue of 10,000 tasks run 134 times as long
/// as one of 1,000 (bench/RESULTS.md); with the orders kept, a step costs what its active tasks do.
struct DownloadTaskTable: Sendable {
    /// A task's place in the queue.
    private struct Place: Comparable, Sendable {
        var queueID: Int64
        var id: String

        static func < (lhs: Place, rhs: Place) -> Bool {
            (lhs.queueID, lhs.id) < (rhs.queueID, rhs.id)
        }
    }

    private var byID: [String: DownloadTaskInfo] = [:]
    /// Every task's place, ascending.
    private var order: [Place] = []
    /// The places of the tasks in an active state, ascending.
    private var active: [Place] = []

    /// The states the scheduler acts on; the others (stopped, success, failed, removing) do not
    /// change by themselves.
    static func isActive(_ state: DownloadState) -> Bool {
        switch state {
        case .preparing, .ready, .running, .waiting, .stopping: true
        case .stopped, .success, .failed, .removing: false
        }
    }

    /// The task with `id`; setting one keeps both orders (`nil` removes it).
    subscript(id: String) -> DownloadTaskInfo? {
        get { byID[id] }
        set {
            let old = byID[id]
            byID[id] = newValue
            let oldPlace = old.map { Place(queueID: $0.queueID, id: id) }
            let newPlace = newValue.map { Place(queueID: $0.queueID, id: id) }
            if oldPlace != newPlace {
                if let oldPlace { Self.remove(oldPlace, from: &order) }
                if let newPlace { Self.insert(newPlace, into: &order) }
            }
            let wasActive = old.map { Self.isActive($0.state) } ?? false
            let isActive = newValue.map { Self.isActive($0.state) } ?? false
            if wasActive != isActive || (wasActive && oldPlace != newPlace) {
                if wasActive, let oldPlace { Self.remove(oldPlace, from: &active) }
                if isActive, let newPlace { Self.insert(newPlace, into: &active) }
            }
        }
    }

    /// Room for `count` tasks: a queue loaded at open does not grow the table step by step.
    mutating func reserveCapacity(_ count: Int) {
        byID.reserveCapacity(count)
        order.reserveCapacity(count)
    }

    /// Every task, in queue order.
    var inQueueOrder: [DownloadTaskInfo] { order.map { byID[$0.id]! } }

    /// The active tasks, in queue order.
    var activeInQueueOrder: [DownloadTaskInfo] { active.map { byID[$0.id]! } }

    /// The active tasks in queue order, as the scheduler sees them; read lazily, so that a step
    /// that needs the first few reads only those.
    var schedulerQueue: some Sequence<DownloadScheduler.Entry> {
        let byID = byID
        return active.lazy.map { DownloadScheduler.Entry(id: $0.id, state: byID[$0.id]!.state) }
    }

    /// Where `place` goes in `places`: at the end (a new task) without a search.
    private static func insert(_ place: Place, into places: inout [Place]) {
        if places.last.map({ $0 < place }) ?? true {
            places.append(place)
        } else {
            places.insert(place, at: position(of: place, in: places))
        }
    }

    private static func remove(_ place: Place, from places: inout [Place]) {
        let index = position(of: place, in: places)
        if index < places.count, places[index] == place { places.remove(at: index) }
    }

    /// The first index whose place is not below `place`.
    private static func position(of place: Place, in places: [Place]) -> Int {
        var (low, high) = (0, places.count)
        while low < high {
            let middle = (low + high) / 2
            if places[middle] < place { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
