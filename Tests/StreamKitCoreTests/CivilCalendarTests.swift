import StreamKitCore
import Testing

/// Day counts and civil dates, both ways, against dates worked out by hand.
@Suite struct CivilCalendarTests {
    @Test(arguments: [
        (Int64(1970), Int64(1), Int64(1), Int64(0)),
        (1969, 12, 31, -1),
        (2000, 2, 29, 11_016),
        (2000, 3, 1, 11_017),
        (1900, 3, 1, -25_508),
        (1600, 1, 1, -135_140),
        (2038, 1, 19, 24_855),
        (-1, 12, 31, -719_529),
    ])
    func knownDates(year: Int64, month: Int64, day: Int64, days: Int64) {
        #expect(CivilCalendar.days(year: year, month: month, day: day) == days)
        #expect(CivilCalendar.date(days: days) == (year, month, day))
    }

    @Test func everyDayOfFourHundredYearsRoundTrips() {
        var expected = (year: Int64(1800), month: Int64(1), day: Int64(1))
        var days = CivilCalendar.days(year: 1800, month: 1, day: 1)
        while expected.year < 2200 {
            #expect(CivilCalendar.days(year: expected.year, month: expected.month, day: expected.day) == days)
            let date = CivilCalendar.date(days: days)
            guard date == expected else {
                Issue.record("day \(days): \(date) instead of \(expected)")
                return
            }
            days += 1
            if expected.day < CivilCalendar.daysIn(month: expected.month, year: expected.year) {
                expected.day += 1
            } else if expected.month < 12 {
                (expected.month, expected.day) = (expected.month + 1, 1)
            } else {
                expected = (expected.year + 1, 1, 1)
            }
        }
    }

    @Test func leapYears() {
        #expect(CivilCalendar.daysIn(month: 2, year: 2000) == 29)
        #expect(CivilCalendar.daysIn(month: 2, year: 1900) == 28)
        #expect(CivilCalendar.daysIn(month: 2, year: 2024) == 29)
        #expect(CivilCalendar.daysIn(month: 2, year: 2023) == 28)
        #expect(CivilCalendar.daysIn(month: 4, year: 2023) == 30)
    }
}
