package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Defaults of S3Options.
const (
	defaultS3Region    = "us-east-1"
	defaultS3Timeout   = 2 * time.Minute
	s3DialTimeout      = 10 * time.Second
	s3HeaderTimeout    = 30 * time.Second
	s3MaxRetryAttempts = 3
)

// S3Options configures an S3Store. Bucket is required; the zero value of
// every other field works.
type S3Options struct {
	// Bucket is the bucket holding the blobs. It must exist.
	Bucket string
	// Prefix is put before every key, e.g. "a2aflow" stores key "a/b" as
	// object "a2aflow/a/b". Default: none.
	Prefix string
	// Endpoint is the base URL of an S3-compatible server, such as
	// "http://127.0.0.1:9000" for MinIO; it selects path-style addressing
	// (http://host/bucket/key). Default: AWS S3 itself, virtual-hosted style.
	Endpoint string
	// Region is the bucket's region. Default: AWS_REGION (or the shared AWS
	// config), else "us-east-1".
	Region string
	// AccessKeyID and SecretAccessKey (with SessionToken, if temporary) are
	// static credentials. Default: the standard AWS chain, which reads
	// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN first,
	// then the shared files and the instance or task role.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// Timeout bounds each Put and Get, retries included. Default 2 minutes.
	Timeout time.Duration
}

// S3Store is a Store in an S3 bucket (AWS S3 or an S3-compatible server
// such as MinIO, Ceph or Garage): key "a/b" is object "<prefix>/a/b".
type S3Store struct {
	client   *s3.Client
	bucket   string
	prefix   string // "" or ending with "/"
	timeout  time.Duration
	describe string
	// noConditionalPut is set once the server refused If-None-Match on
	// PutObject (older S3-compatible servers), so Put stops sending it.
	noConditionalPut atomic.Bool
}

var _ Store = (*S3Store)(nil)

// NewS3Store returns the store in opts.Bucket. It resolves configuration
// and credentials but makes no request: a missing bucket or wrong
// credentials show on the first Put or Get.
func NewS3Store(ctx context.Context, opts S3Options) (*S3Store, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3 blob store: no bucket")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultS3Timeout
	}
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = s3DialTimeout }).
		WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = s3HeaderTimeout })
	load := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithRetryMaxAttempts(s3MaxRetryAttempts),
	}
	if opts.Region != "" {
		load = append(load, awsconfig.WithRegion(opts.Region))
	}
	if opts.AccessKeyID != "" || opts.SecretAccessKey != "" {
		if opts.AccessKeyID == "" || opts.SecretAccessKey == "" {
			return nil, errors.New("s3 blob store: an access key ID needs its secret access key, and the other way round")
		}
		load = append(load, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, opts.SessionToken)))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3 blob store: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultS3Region
	}
	var endpoint *url.URL
	if opts.Endpoint != "" {
		if endpoint, err = url.Parse(opts.Endpoint); err != nil || (endpoint.Scheme != "http" && endpoint.Scheme != "https") || endpoint.Host == "" {
			return nil, fmt.Errorf("s3 blob store: endpoint %q: want http://host:port or https://host:port", opts.Endpoint)
		}
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != nil {
			o.BaseEndpoint = aws.String(opts.Endpoint)
			o.UsePathStyle = true
			// S3-compatible servers vary in their support of the newer
			// default checksums (CRC32 on every request); send them only
			// where an operation requires one.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	prefix := strings.Trim(opts.Prefix, "/")
	if prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("s3 blob store prefix: %w", err)
		}
		prefix += "/"
	}
	describe := (&url.URL{Scheme: "s3", Host: opts.Bucket, Path: "/" + prefix}).String()
	if endpoint != nil {
		describe += "?endpoint=" + (&url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host, Path: endpoint.Path}).String()
	}
	return &S3Store{client: client, bucket: opts.Bucket, prefix: prefix, timeout: opts.Timeout, describe: describe}, nil
}

// Describe returns the store's s3:// URL, with its endpoint but never its
// credentials.
func (s *S3Store) Describe() string { return s.describe }

// object returns the object key of key, or an error wrapping ErrBadKey.
func (s *S3Store) object(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Put stores data under key, as a conditional write (If-None-Match: *) so
// an existing object is never replaced. A key that already holds an object
// of the same size is taken as holding the same bytes; one of another size
// fails with ErrConflict.
func (s *S3Store) Put(ctx context.Context, key string, data []byte) error {
	object, err := s.object(key)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(object),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String("application/octet-stream"),
	}
	conditional := !s.noConditionalPut.Load()
	if conditional {
		in.IfNoneMatch = aws.String("*")
	}
	_, err = s.client.PutObject(ctx, in)
	if conditional && isS3Code(err, "NotImplemented") {
		s.noConditionalPut.Store(true)
		in.IfNoneMatch = nil
		in.Body = bytes.NewReader(data)
		_, err = s.client.PutObject(ctx, in)
	}
	switch {
	case err == nil:
		return nil
	case isS3Status(err, http.StatusPreconditionFailed), isS3Status(err, http.StatusConflict):
		// The object exists (412), or another conditional write of it is
		// in flight (409).
		return s.checkExisting(ctx, key, object, len(data))
	default:
		return fmt.Errorf("put %s to %s: %w", key, s.describe, err)
	}
}

// checkExisting returns nil when object exists with size bytes.
func (s *S3Store) checkExisting(ctx context.Context, key, object string, size int) error {
	head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(object)})
	if err != nil {
		return fmt.Errorf("put %s to %s: the key exists, but: %w", key, s.describe, err)
	}
	if got := aws.ToInt64(head.ContentLength); got != int64(size) {
		return fmt.Errorf("put %s (%d bytes): %w (%d bytes)", key, size, ErrConflict, got)
	}
	return nil
}

// Get returns the bytes stored under key, or an error wrapping ErrNotFound.
func (s *S3Store) Get(ctx context.Context, key string) ([]byte, error) {
	object, err := s.object(key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(object)})
	if err != nil {
		var noKey *types.NoSuchKey
		if errors.As(err, &noKey) || isS3Status(err, http.StatusNotFound) && !isS3Code(err, "NoSuchBucket") {
			return nil, fmt.Errorf("get %s from %s: %w", key, s.describe, ErrNotFound)
		}
		return nil, fmt.Errorf("get %s from %s: %w", key, s.describe, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("get %s from %s: %w", key, s.describe, err)
	}
	return data, nil
}

// isS3Status reports whether err is an S3 response with HTTP status code.
func isS3Status(err error, code int) bool {
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == code
}

// isS3Code reports whether err is an S3 error with the given error code.
func isS3Code(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}
