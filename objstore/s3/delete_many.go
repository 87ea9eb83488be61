package s3

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/graphkernel/graphkernel/objstore"
)

var _ objstore.BatchDeleter = (*Store)(nil)

// DeleteMany implements objstore.BatchDeleter with one DeleteObjects
// request (quiet: only failures are listed). A key the request could not
// delete gets its own error (NoSuchKey is no error); a request that failed
// as a whole gives every key its error, ambiguous as a failed DeleteObject
// would be. An invalid key fails alone, before the request; more than
// objstore.MaxDeleteBatch keys fail every key.
func (s *Store) DeleteMany(ctx context.Context, keys []string) []error {
	if errs := objstore.OversizedBatch(keys); errs != nil {
		return errs
	}
	errs := make([]error, len(keys))
	var ids []types.ObjectIdentifier
	at := map[string]int{} // full key -> index in keys (keys are distinct per request)
	for i, k := range keys {
		if err := objstore.ValidateKey(objstore.OpDelete, k); err != nil {
			errs[i] = err
			continue
		}
		if len(s.prefix)+len(k) > objstore.MaxKeyBytes {
			errs[i] = objstore.NewError(objstore.OpDelete, k, objstore.ErrInvalidKey,
				fmt.Errorf("longer than %d bytes with the store prefix", objstore.MaxKeyBytes))
			continue
		}
		if _, dup := at[s.prefix+k]; dup {
			continue // the same key twice: one delete answers both (below)
		}
		at[s.prefix+k] = i
		ids = append(ids, types.ObjectIdentifier{Key: aws.String(s.prefix + k)})
	}
	if len(ids) == 0 {
		return errs
	}
	ctx, cancel, err := s.withTimeout(ctx, objstore.OpDelete, keys[0])
	if err != nil {
		return s.fillMany(keys, errs, err)
	}
	defer cancel()
	out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
		Bucket: aws.String(s.bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	}, noRetry)
	if err != nil {
		if status, code := responseOf(err); status == 501 || code == "NotImplemented" {
			return s.deleteEach(ctx, keys, errs) // a service without DeleteObjects: one DeleteObject a key
		}
		return s.fillMany(keys, errs, err)
	}
	for _, e := range out.Errors {
		i, ok := at[aws.ToString(e.Key)]
		if !ok {
			continue // not a key of ours: nothing to report it on
		}
		code := aws.ToString(e.Code)
		switch {
		case code == "NoSuchKey":
		case throttledOrTimedOut(0, code) || code == "InternalError" || code == "ServiceUnavailable":
			errs[i] = objstore.NewAmbiguousError(objstore.OpDelete, keys[i], objstore.ErrTransient, fmt.Errorf("DeleteObjects: %s", code))
		default:
			errs[i] = objstore.NewError(objstore.OpDelete, keys[i], objstore.ErrRejected, fmt.Errorf("DeleteObjects: %s", code))
		}
	}
	for i, k := range keys { // a key given twice shares its first copy's outcome
		if j, ok := at[s.prefix+k]; ok && j != i && errs[i] == nil {
			errs[i] = errs[j]
		}
	}
	return errs
}

// deleteEach deletes every valid key of keys with its own request.
func (s *Store) deleteEach(ctx context.Context, keys []string, errs []error) []error {
	for i, k := range keys {
		if errs[i] == nil {
			errs[i] = s.Delete(ctx, k)
		}
	}
	return errs
}

// fillMany gives every valid key of a failed DeleteObjects the request's
// mapped error (a missing key is no error).
func (s *Store) fillMany(keys []string, errs []error, err error) []error {
	for i, k := range keys {
		if errs[i] != nil {
			continue
		}
		if mapped := mapError(objstore.OpDelete, k, false, err); mapped.Kind != objstore.ErrNotFound {
			errs[i] = mapped
		}
	}
	return errs
}
