// Package ssbgen generates Star Schema Benchmark tables at a tiny scale,
// deterministically from a seed, for the query workload's tests (SSB's
// dbgen is not packaged where they run): lineorder, customer, supplier,
// part and date with SSB's columns and value domains, and lineorder_flat,
// the denormalised table ClickHouse runs SSB on. It is not dbgen: the
// distributions are SSB's domains drawn uniformly, enough for every
// query of the benchmark to read real rows.
package ssbgen

import (
	"encoding/csv"
	"fmt"
	"io"
	"math/rand"
	"strconv"
	"time"
)

// Sizes of the tables.
type Sizes struct {
	LineOrders, Customers, Suppliers, Parts int
}

// Tiny is the scale of the tests: 20,000 line orders.
var Tiny = Sizes{LineOrders: 20000, Customers: 300, Suppliers: 100, Parts: 1000}

// Data is the generated tables, as rows of CSV fields.
type Data struct {
	tables map[string][][]string
}

// Tables are the table names, in the order they are best loaded.
var Tables = []string{"customer", "supplier", "part", "date", "lineorder", "lineorder_flat"}

// Rows returns a table's rows.
func (d *Data) Rows(table string) [][]string { return d.tables[table] }

// WriteCSV writes a table as CSV (RFC 4180, no header).
func (d *Data) WriteCSV(table string, w io.Writer) error {
	rows, ok := d.tables[table]
	if !ok {
		return fmt.Errorf("no table %q", table)
	}
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

var (
	nations = []struct{ name, region string }{
		{"ALGERIA", "AFRICA"}, {"ARGENTINA", "AMERICA"}, {"BRAZIL", "AMERICA"}, {"CANADA", "AMERICA"}, {"EGYPT", "MIDDLE EAST"},
		{"ETHIOPIA", "AFRICA"}, {"FRANCE", "EUROPE"}, {"GERMANY", "EUROPE"}, {"INDIA", "ASIA"}, {"INDONESIA", "ASIA"},
		{"IRAN", "MIDDLE EAST"}, {"IRAQ", "MIDDLE EAST"}, {"JAPAN", "ASIA"}, {"JORDAN", "MIDDLE EAST"}, {"KENYA", "AFRICA"},
		{"MOROCCO", "AFRICA"}, {"MOZAMBIQUE", "AFRICA"}, {"PERU", "AMERICA"}, {"CHINA", "ASIA"}, {"ROMANIA", "EUROPE"},
		{"SAUDI ARABIA", "MIDDLE EAST"}, {"VIETNAM", "ASIA"}, {"RUSSIA", "EUROPE"}, {"UNITED KINGDOM", "EUROPE"}, {"UNITED STATES", "AMERICA"},
	}
	segments   = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"}
	priorities = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECI", "5-LOW"}
	shipModes  = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	colors     = []string{"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue", "blush", "brown", "burlywood", "chartreuse", "chiffon", "chocolate", "coral", "cornflower", "cream", "cyan", "dark"}
	types1     = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	types2     = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	types3     = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	containers = []string{"SM CASE", "SM BOX", "MED BAG", "MED BOX", "LG CASE", "LG BOX", "JUMBO PKG", "WRAP DRUM"}
	months     = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	seasons    = []string{"Winter", "Winter", "Spring", "Spring", "Spring", "Summer", "Summer", "Summer", "Fall", "Fall", "Christmas", "Christmas"}
)

// First and last dates of the date table, and of order dates.
var (
	firstDay     = time.Date(1992, 1, 1, 0, 0, 0, 0, time.UTC)
	lastDay      = time.Date(1998, 12, 31, 0, 0, 0, 0, time.UTC)
	lastOrderDay = time.Date(1998, 8, 2, 0, 0, 0, 0, time.UTC)
)

// Generate makes the tables from a seed.
func Generate(seed int64, s Sizes) *Data {
	rng := rand.New(rand.NewSource(seed))
	d := &Data{tables: map[string][][]string{}}
	customers := places(rng, "Customer", s.Customers, true)
	suppliers := places(rng, "Supplier", s.Suppliers, false)
	parts := genParts(rng, s.Parts)
	d.tables["customer"] = customers
	d.tables["supplier"] = suppliers
	d.tables["part"] = parts
	d.tables["date"] = dates()
	lo, flat := lineOrders(rng, s.LineOrders, customers, suppliers, parts)
	d.tables["lineorder"], d.tables["lineorder_flat"] = lo, flat
	return d
}

// places are customers (with a market segment) or suppliers: key, name,
// address, city, nation, region, phone[, segment].
func places(rng *rand.Rand, kind string, n int, segment bool) [][]string {
	rows := make([][]string, 0, n)
	for k := 1; k <= n; k++ {
		ni := rng.Intn(len(nations))
		nat := nations[ni]
		row := []string{strconv.Itoa(k), fmt.Sprintf("%s#%09d", kind, k), randomText(rng, 10, 25),
			city(nat.name, rng.Intn(10)), nat.name, nat.region, fmt.Sprintf("%02d-%03d-%03d-%04d", ni+10, rng.Intn(1000), rng.Intn(1000), rng.Intn(10000))}
		if segment {
			row = append(row, segments[rng.Intn(len(segments))])
		}
		rows = append(rows, row)
	}
	return rows
}

// city is SSB's: the nation's name cut or padded to 9 characters, then a digit.
func city(nation string, i int) string {
	return fmt.Sprintf("%-9.9s%d", nation, i)
}

// genParts: key, name, mfgr, category, brand, color, type, size, container.
func genParts(rng *rand.Rand, n int) [][]string {
	rows := make([][]string, 0, n)
	for k := 1; k <= n; k++ {
		m := 1 + rng.Intn(5)
		c := 1 + rng.Intn(5)
		b := 1 + rng.Intn(40)
		color := colors[rng.Intn(len(colors))]
		rows = append(rows, []string{strconv.Itoa(k), color + " " + colors[rng.Intn(len(colors))],
			fmt.Sprintf("MFGR#%d", m), fmt.Sprintf("MFGR#%d%d", m, c), fmt.Sprintf("MFGR#%d%d%02d", m, c, b), color,
			types1[rng.Intn(len(types1))] + " " + types2[rng.Intn(len(types2))] + " " + types3[rng.Intn(len(types3))],
			strconv.Itoa(1 + rng.Intn(50)), containers[rng.Intn(len(containers))]})
	}
	return rows
}

// dates: datekey, date, dayofweek, month, year, yearmonthnum, yearmonth,
// daynuminweek, daynuminmonth, daynuminyear, monthnuminyear,
// weeknuminyear, sellingseason, lastdayinweekfl, lastdayinmonthfl,
// holidayfl, weekdayfl.
func dates() [][]string {
	var rows [][]string
	for t := firstDay; !t.After(lastDay); t = t.AddDate(0, 0, 1) {
		_, week := t.ISOWeek()
		dow := (int(t.Weekday())+6)%7 + 1 // Monday 1
		last := t.AddDate(0, 0, 1).Month() != t.Month()
		rows = append(rows, []string{dateKey(t), t.Format("2006-01-02"), t.Weekday().String(), months[t.Month()-1],
			strconv.Itoa(t.Year()), t.Format("200601"), t.Format("Jan2006"), strconv.Itoa(dow), strconv.Itoa(t.Day()),
			strconv.Itoa(t.YearDay()), strconv.Itoa(int(t.Month())), strconv.Itoa(week), seasons[t.Month()-1],
			flag(dow == 7), flag(last), flag(t.Month() == 12 && t.Day() == 25), flag(dow <= 5)})
	}
	return rows
}

func dateKey(t time.Time) string { return t.Format("20060102") }

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// lineOrders: orderkey, linenumber, custkey, partkey, suppkey, orderdate,
// orderpriority, shippriority, quantity, extendedprice, ordtotalprice,
// discount, revenue, supplycost, tax, commitdate, shipmode; and the same
// row joined with its customer, supplier and part, dates as dates.
func lineOrders(rng *rand.Rand, n int, customers, suppliers, parts [][]string) (lo, flat [][]string) {
	days := int(lastOrderDay.Sub(firstDay).Hours()/24) + 1
	for order := 1; len(lo) < n; order++ {
		lines := 1 + rng.Intn(7)
		cust := customers[rng.Intn(len(customers))]
		orderDate := firstDay.AddDate(0, 0, rng.Intn(days))
		priority := priorities[rng.Intn(len(priorities))]
		var rows [][]string
		total := 0
		for l := 1; l <= lines && len(lo)+len(rows) < n; l++ {
			part := parts[rng.Intn(len(parts))]
			supp := suppliers[rng.Intn(len(suppliers))]
			qty := 1 + rng.Intn(50)
			price := 90000 + rng.Intn(20000) // cents of one unit, as dbgen's retail price
			ext := qty * price / 100
			disc := rng.Intn(11)
			tax := rng.Intn(9)
			revenue := ext * (100 - disc) / 100
			cost := price * 6 / 1000
			commit := orderDate.AddDate(0, 0, 30+rng.Intn(61))
			total += ext * (100 - disc) / 100 * (100 + tax) / 100
			rows = append(rows, []string{strconv.Itoa(order), strconv.Itoa(l), cust[0], part[0], supp[0], dateKey(orderDate),
				priority, "0", strconv.Itoa(qty), strconv.Itoa(ext), "", strconv.Itoa(disc), strconv.Itoa(revenue),
				strconv.Itoa(cost), strconv.Itoa(tax), dateKey(commit), shipModes[rng.Intn(len(shipModes))]})
			flat = append(flat, nil)
			flat[len(flat)-1] = append(append(append([]string{}, cust[1:]...), supp[1:]...), part[1:]...)
		}
		for _, r := range rows {
			r[10] = strconv.Itoa(total)
		}
		for i, r := range rows {
			j := len(flat) - len(rows) + i
			f := append([]string{}, r...)
			f[5] = isoDate(r[5])
			f[15] = isoDate(r[15])
			flat[j] = append(f, flat[j]...)
		}
		lo = append(lo, rows...)
	}
	return lo, flat
}

func isoDate(key string) string { return key[:4] + "-" + key[4:6] + "-" + key[6:] }

func randomText(rng *rand.Rand, min, max int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,"
	b := make([]byte, min+rng.Intn(max-min+1))
	for i := range b {
		b[i] = letters[rng.Intn(len(letters))]
	}
	return string(b)
}
