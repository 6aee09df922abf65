// Package s3test starts an S3-compatible server for tests: gofakes3, built
// from tests/s3fake (a module of its own, so that gofakes3 stays out of
// a2aflow's go.mod) and run as its own process on a loopback port, as a
// real object store would be.
package s3test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildOut  []byte
)

// build builds tests/s3fake once per test binary.
func build() (string, error) {
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "s3fake-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "s3fake")
		cmd := exec.Command("go", "build", "-o", binary, ".")
		cmd.Dir = filepath.Join(root, "tests", "s3fake")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	return binary, buildErr
}

// Start starts the fake S3 server for the test and returns its endpoint
// (http://127.0.0.1:PORT). It stops when the test ends. The test is skipped
// when the server cannot be built (no Go module proxy to fetch gofakes3).
func Start(t testing.TB) string {
	t.Helper()
	bin, err := build()
	if err != nil {
		t.Skipf("S3 not tested: cannot build the S3-compatible fake server in tests/s3fake: %v\n%s", err, buildOut)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stdin, err := cmd.StdinPipe() // closing it ends the fake
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start s3fake: %v", err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		endpoint, ok := strings.CutPrefix(line, "listening on ")
		if !ok {
			t.Fatalf("s3fake said %q, want \"listening on URL\"", line)
		}
		return endpoint
	case <-time.After(30 * time.Second):
		t.Fatal("s3fake did not start within 30 s")
	}
	return ""
}

// CreateBucket creates bucket on the server at endpoint (any credentials
// do for the fake).
func CreateBucket(t testing.TB, endpoint, bucket string) {
	t.Helper()
	c := s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
}
