import StreamKitHLS

extension MPD {
    /// The MPD with no BaseURL left and every Representation's own segment description in
    /// place of what it inherited (§5.3.9.1), each URL in it (a template's `media` and
    /// `initialization` too, `$…$` identifiers and all) made absolute against `mpdURL` through
    /// the BaseURLs, then passed through `transform`. Byte ranges and timing stay as written.
    /// For a proxy that serves the MPD from elsewhere and wants every request through it. Pure.
    ///
    /// - Parameters:
    ///   - mpdURL: The URL the MPD was loaded from (after redirects).
    ///   - transform: The URL a player should fetch for an absolute URL (or template).
    public func withAbsoluteURLs(mpdURL: String, transform: (String) -> String) -> MPD {
        var output = self
        output.baseURLs = []
        for periodIndex in periods.indices {
            let period = periods[periodIndex]
            output.periods[periodIndex].baseURLs = []
            output.periods[periodIndex].segments = SegmentInformation()
            for setIndex in period.adaptationSets.indices {
                let set = period.adaptationSets[setIndex]
                output.periods[periodIndex].adaptationSets[setIndex].baseURLs = []
                output.periods[periodIndex].adaptationSets[setIndex].segments = SegmentInformation()
                for repIndex in set.representations.indices {
                    let representation = set.representations[repIndex]
                    var base = mpdURL
                    for urls in [baseURLs, period.baseURLs, set.baseURLs, representation.baseURLs] {
                        if let first = urls.first, !first.isEmpty { base = resolveURI(first, against: base) }
                    }
                    func absolute(_ reference: String?) -> String? {
                        reference.map { transform(resolveURI($0, against: base)) }
                    }
                    let levels = [period.segments, set.segments, representation.segments]
                    var rewritten = representation
                    rewritten.baseURLs = []
                    if levels.contains(where: { $0.template != nil }) {
                        var template = SegmentInheritance.template(levels)
                        template.media = absolute(template.media)
                        template.index = absolute(template.index)
                        template.initializationTemplate = absolute(template.initializationTemplate)
                        if let initialization = template.timing.initialization {
                            template.timing.initialization = URLWithRange(
                                sourceURL: absolute(initialization.sourceURL ?? ""), range: initialization.range)
                        }
                        rewritten.segments = SegmentInformation(template: template)
                    } else if levels.contains(where: { $0.list != nil }) {
                        var list = SegmentInheritance.list(levels)
                        // A SegmentURL or Initialization without a URL is the BaseURL's resource.
                        list.segments = list.segments.map { segment in
                            var segment = segment
                            segment.media = absolute(segment.media ?? "")
                            return segment
                        }
                        if let initialization = list.timing.initialization {
                            list.timing.initialization = URLWithRange(
                                sourceURL: absolute(initialization.sourceURL ?? ""), range: initialization.range)
                        }
                        rewritten.segments = SegmentInformation(list: list)
                    } else {
                        // SegmentBase, or the whole resource: the BaseURL names the file.
                        var segmentBase = SegmentInheritance.base(levels)
                        if let initialization = segmentBase.timing.initialization {
                            segmentBase.timing.initialization = URLWithRange(
                                sourceURL: absolute(initialization.sourceURL ?? ""), range: initialization.range)
                        }
                        rewritten.segments = SegmentInformation(base: segmentBase)
                        rewritten.baseURLs = [transform(base)]
                    }
                    output.periods[periodIndex].adaptationSets[setIndex].representations[repIndex] = rewritten
                }
            }
        }
        return output
    }
}
