package dbstats

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// openers connect a poller by the name of its statistics.
var openers = map[string]func(context.Context, Config) (Poller, error){
	SourcePostgreSQL: func(ctx context.Context, c Config) (Poller, error) { return NewPostgres(ctx, c) },
	SourceMySQL:      func(ctx context.Context, c Config) (Poller, error) { return NewMySQL(ctx, c) },
	SourceRedis:      func(ctx context.Context, c Config) (Poller, error) { return NewRedis(ctx, c) },
	SourceMongoDB:    func(ctx context.Context, c Config) (Poller, error) { return NewMongoDB(ctx, c) },
	SourceOpenSearch: func(ctx context.Context, c Config) (Poller, error) { return NewOpenSearch(ctx, c) },
}

// Sources lists the statistics a poller can read.
func Sources() []string {
	var out []string
	for s := range openers {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Open connects the poller of a source (one of Sources).
func Open(ctx context.Context, source string, c Config) (Poller, error) {
	open, ok := openers[source]
	if !ok {
		return nil, fmt.Errorf("no poller reads %q statistics (known: %s)", source, strings.Join(Sources(), ", "))
	}
	return open(ctx, c)
}
