package store

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestRedisURLs(t *testing.T) {
	for _, tt := range []struct {
		name, url, mode string
		want            string // the client's type, or "" for an error
		wantErr         string // part of the error
		wantName        string
	}{
		{name: "single", url: "redis://127.0.0.1:6379/2", want: "*redis.Client", wantName: "redis 127.0.0.1:6379"},
		{name: "single, said so", url: "redis://127.0.0.1:6379", mode: ModeSingle, want: "*redis.Client"},
		{name: "sentinel by its master's name", url: "redis://127.0.0.1:26379?master_name=mymaster&addr=127.0.0.1:26380", want: "*redis.Client", wantName: "redis sentinel mymaster at 127.0.0.1:26379,127.0.0.1:26380"},
		{name: "sentinel, said so", url: "redis://:pw@127.0.0.1:26379?master_name=m", mode: ModeSentinel, want: "*redis.Client", wantName: "redis sentinel m at 127.0.0.1:26379"},
		{name: "cluster", url: "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", mode: ModeCluster, want: "*redis.ClusterClient", wantName: "redis cluster 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002"},
		{name: "cluster, database 0", url: "redis://127.0.0.1:7000/0", mode: ModeCluster, want: "*redis.ClusterClient"},
		{name: "seeds without a mode", url: "redis://127.0.0.1:7000?addr=127.0.0.1:7001", wantErr: "LOCKLAB_REDIS_MODE=cluster"},
		{name: "sentinel without a name", url: "redis://127.0.0.1:26379", mode: ModeSentinel, wantErr: "master_name"},
		{name: "cluster with a master name", url: "redis://127.0.0.1:7000?master_name=m", mode: ModeCluster, wantErr: "master_name is for Sentinel"},
		{name: "cluster with a database", url: "redis://127.0.0.1:7000/3", mode: ModeCluster, wantErr: "database 0 only"},
		{name: "unknown mode", url: "redis://127.0.0.1:6379", mode: "ring", wantErr: `LOCKLAB_REDIS_MODE "ring"`},
		{name: "not redis", url: "http://127.0.0.1:6379", wantErr: "REDIS_URL"},
		{name: "unknown option", url: "redis://127.0.0.1:6379?pool=3", wantErr: "pool"},
		{name: "sentinel, unknown option", url: "redis://127.0.0.1:26379?master_name=m&nope=1", wantErr: "nope"},
		{name: "no host", url: "redis://:pw@/1", want: "*redis.Client", wantName: "redis localhost:6379"},
		{name: "no port", url: "redis://redis/0", want: "*redis.Client", wantName: "redis redis:6379"},
		{name: "empty port", url: "redis://redis:/0", want: "*redis.Client", wantName: "redis redis:6379"},
		{name: "unix socket", url: "unix:///run/redis.sock?db=1", want: "*redis.Client"},
		{name: "seed with an empty port", url: "redis://a:7000?addr=b:", mode: ModeCluster, wantErr: "from 1 to 65535"},
		{name: "IPv6", url: "redis://[::1]:6379?addr=[::1]:6380", mode: ModeCluster, want: "*redis.ClusterClient"},
		{name: "hosts in one", url: "redis://127.0.0.1:6379,127.0.0.1:6380", wantErr: `"127.0.0.1:6379,127.0.0.1:6380" names several hosts`},
		{name: "cluster, hosts in one", url: "redis://a:7000,b:7001", mode: ModeCluster, wantErr: "several hosts"},
		{name: "port out of range", url: "redis://127.0.0.1:99999", wantErr: "from 1 to 65535"},
		{name: "port 0", url: "redis://127.0.0.1:0", wantErr: "from 1 to 65535"},
		{name: "seed without a port", url: "redis://a:7000?addr=b", mode: ModeCluster, wantErr: `addr= "b": want HOST:PORT`},
		{name: "sentinel without a host", url: "redis://s1:26379?master_name=m&addr=:26380", wantErr: "has no host"},
		{name: "seed port out of range", url: "redis://a:7000?addr=b:70000", mode: ModeCluster, wantErr: "from 1 to 65535"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newRedisClient(tt.url, tt.mode, 0)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("newRedisClient(%q, %q) error = %v; want one saying %q", tt.url, tt.mode, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("newRedisClient(%q, %q) = %v", tt.url, tt.mode, err)
			}
			defer c.Close()
			if got := typeName(c.UniversalClient); got != tt.want {
				t.Errorf("newRedisClient(%q, %q) is a %s; want %s", tt.url, tt.mode, got, tt.want)
			}
			if tt.wantName != "" && c.name != tt.wantName {
				t.Errorf("newRedisClient(%q, %q) is named %q; want %q", tt.url, tt.mode, c.name, tt.wantName)
			}
			if strings.Contains(c.name, "pw") {
				t.Errorf("name %q shows the password", c.name)
			}
		})
	}
}

func typeName(c redis.UniversalClient) string {
	switch c.(type) {
	case *redis.Client:
		return "*redis.Client"
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	}
	return "other"
}
