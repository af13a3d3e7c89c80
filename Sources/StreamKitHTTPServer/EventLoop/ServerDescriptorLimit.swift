#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's descriptor limit (`RLIMIT_NOFILE`), which bounds the connections a server can
/// hold: the soft limit is often 1024, below what the server accepts.
enum ServerDescriptorLimit {
    /// The most the soft limit is raised to: enough for every connection with a file open each,
    /// and low enough that code closing every possible descriptor before `exec` stays quick.
    static let ceiling = 65_536

    /// Raises the soft limit to the hard limit, at most ``ceiling``; never lowers it.
    ///
    /// - Returns: The soft limit in force afterwards, or `nil` when it cannot be read.
    @discardableResult
    static func raise() -> Int? {
        #if canImport(Glibc)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return nil }
        let wanted = min(limit.rlim_max, rlim_t(ceiling))
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// The connections a server can hold under a soft limit of `descriptors`: half of them, the
    /// other half for the files those connections send and the rest of the process.
    static func connectionCapacity(descriptors: Int) -> Int {
        max(1, descriptors / 2)
    }
}
