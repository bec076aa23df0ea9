use super::*;

fn exists(a: &SharedArray<f32>) -> bool {
    crate::sys::shm::dir().join(a.segment_name()).exists()
}

#[test]
fn create_view_write_and_remove() {
    let mut a = SharedArray::<f32>::zeros(&[3, 4]).unwrap();
    assert_eq!((a.shape(), a.len(), a.dtype(), a.is_creator()), (&[3, 4][..], 12, DType::F32, true));
    assert!(a.as_slice().iter().all(|&x| x == 0.0));
    // SAFETY: no other array shares `a`'s memory yet.
    for (i, x) in unsafe { a.view_mut() }.iter_mut().enumerate() {
        *x = i as f32;
    }
    let b = a.clone();
    assert_eq!(b.view()[[2, 3]], 11.0);
    assert!(exists(&a));
    drop(a);
    assert!(exists(&b), "a clone keeps the segment");
    let path = crate::sys::shm::dir().join(b.segment_name());
    drop(b);
    assert!(!path.exists(), "the last handle removes the file");
}

#[test]
fn from_slice_and_ndarray() {
    let a = SharedArray::from_slice(&[1i32, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    assert_eq!(a.to_ndarray(), ndarray::arr2(&[[1, 2, 3], [4, 5, 6]]).into_dyn());
    let t = ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]).reversed_axes();
    let b = SharedArray::from_ndarray(&t).unwrap();
    assert_eq!(b.as_slice(), &[1.0, 3.0, 2.0, 4.0]);
    assert!(matches!(
        SharedArray::from_slice(&[1u32, 2], &[3]),
        Err(Error::LengthMismatch { len: 2, expected: 3, .. })
    ));
    let e = SharedArray::<f32>::zeros(&[0, 5]).unwrap();
    assert!(e.is_empty() && e.as_slice().is_empty());
}

#[test]
fn rows_share_memory_and_check_range() {
    let a = SharedArray::from_slice(&(0..12).map(|i| i as f32).collect::<Vec<_>>(), &[4, 3]).unwrap();
    let mut r = a.rows(1..3).unwrap();
    assert_eq!(r.shape(), &[2, 3]);
    assert_eq!(r.as_slice(), &[3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    // SAFETY: no borrow of `a` or `r` is alive across this write.
    unsafe { r.as_slice_mut()[0] = -1.0 };
    assert_eq!(a.as_slice()[3], -1.0);
    assert!(matches!(a.rows(3..5), Err(Error::OutOfRange { end: 5, len: 4, .. })));
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = a.rows(3..2);
    assert!(matches!(backwards, Err(Error::OutOfRange { .. })));
    let scalar = SharedArray::<f32>::zeros(&[]).unwrap();
    assert!(matches!(scalar.rows(0..1), Err(Error::InvalidShape(_))));
}

#[test]
fn handle_round_trip_attaches_the_same_memory() {
    let a = SharedArray::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let r = a.rows(1..2).unwrap();
    let bytes = postcard::to_allocvec(&r).unwrap();
    assert!(bytes.len() < 100, "a handle, not the data: {} bytes", bytes.len());
    let mut back: SharedArray<f32> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back.as_slice(), &[3.0, 4.0]);
    // SAFETY: no borrow of `a`, `r` or `back` is alive across this write.
    unsafe { back.as_slice_mut()[1] = 9.0 };
    assert_eq!(a.as_slice()[3], 9.0);
    assert!(back.is_creator(), "in the creator the mapping and ownership are reused");
}

#[test]
fn bad_handles_are_typed_errors() {
    let a = SharedArray::<f32>::zeros(&[8]).unwrap();
    let h = a.handle();
    let with = |f: &dyn Fn(&mut SharedHandle)| {
        let mut h = h.clone();
        f(&mut h);
        h
    };
    let shared_err = |r: Result<SharedArray<f32>>| match r {
        Err(Error::SharedMemory { why, .. }) => why,
        other => panic!("expected a SharedMemory error, got {other:?}"),
    };
    let why = shared_err(SharedArray::attach(&with(&|h| h.shape = vec![9])));
    assert!(why.contains("does not fit"), "{why}");
    let why = shared_err(SharedArray::attach(&with(&|h| h.offset = 2)));
    assert!(why.contains("does not fit"), "{why}");
    let why = shared_err(SharedArray::attach(&with(&|h| h.token ^= 1)));
    assert!(why.contains("token"), "{why}");
    let why = shared_err(SharedArray::attach(&with(&|h| h.name = "../../etc/passwd".into())));
    assert!(why.contains("not a shared-array segment"), "{why}");
    let why = shared_err(SharedArray::attach(&with(&|h| h.name.push_str("77"))));
    assert!(why.contains("no longer exists"), "{why}");
    assert!(matches!(
        SharedArray::<u32>::attach(&h),
        Err(Error::DTypeMismatch { expected: DType::U32, found: DType::F32, .. })
    ));
    assert!(matches!(
        SharedArray::<u32>::attach(&with(&|h| h.dtype = DType::U32)),
        Err(Error::DTypeMismatch { expected: DType::U32, found: DType::F32, .. })
    ));
    // Decoding a bad handle is a serde error with the same message.
    let bytes = postcard::to_allocvec(&carry::Carried::Handle(with(&|h| h.shape = vec![100]))).unwrap();
    let _ = take_decode_error();
    assert!(postcard::from_bytes::<SharedArray<f32>>(&bytes).is_err());
    let kept = take_decode_error().unwrap_or_default();
    assert!(kept.contains("does not fit"), "the pool reports the reason postcard drops: {kept:?}");
}

#[test]
fn lock_serializes_threads() {
    let lock = SharedLock::new().unwrap();
    let counter = SharedArray::<u32>::zeros(&[1]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            let (lock, mut counter) = (lock.clone(), counter.clone());
            s.spawn(move || {
                for _ in 0..50 {
                    lock.with(|| {
                        let v = counter.as_slice()[0];
                        std::thread::yield_now();
                        // SAFETY: the lock is held: no other thread touches the counter.
                        unsafe { counter.as_slice_mut()[0] = v + 1 };
                    })
                    .unwrap();
                }
            });
        }
    });
    assert_eq!(counter.as_slice()[0], 200);
    let bytes = postcard::to_allocvec(&lock).unwrap();
    let back: SharedLock = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back.name(), lock.name());
}

#[test]
fn carried_as_a_handle_by_default_and_as_data_for_other_hosts() {
    let mut a = SharedArray::<f64>::zeros(&[4, 3]).unwrap();
    // SAFETY: no other array shares `a`'s memory yet.
    for (i, x) in unsafe { a.as_slice_mut() }.iter_mut().enumerate() {
        *x = i as f64 * 0.5;
    }
    let rows = a.rows(1..3).unwrap();
    // The default: a handle naming the same memory (what process workers map).
    let handle = postcard::to_allocvec(&rows).unwrap();
    let mapped: SharedArray<f64> = postcard::from_bytes(&handle).unwrap();
    assert_eq!(mapped.segment_name(), a.segment_name());
    assert_eq!(mapped.as_slice(), &a.as_slice()[3..9]);
    // Data mode: dtype, shape and the elements; the decoder makes an array of its own.
    let data = carry::as_data(|| postcard::to_allocvec(&rows).unwrap());
    assert!(data.len() >= 6 * 8, "{} bytes", data.len());
    assert!(!data.windows(a.segment_name().len()).any(|w| w == a.segment_name().as_bytes()), "no segment name");
    let name = a.segment_name().to_string();
    drop((a, rows, mapped));
    assert!(!crate::sys::shm::dir().join(&name).exists(), "the original is gone");
    let copy: SharedArray<f64> = postcard::from_bytes(&data).unwrap();
    assert_ne!(copy.segment_name(), name);
    assert!(copy.is_creator(), "the receiver owns its copy");
    assert_eq!(copy.shape(), &[2, 3]);
    assert_eq!(copy.as_slice(), &[1.5, 2.0, 2.5, 3.0, 3.5, 4.0]);
    // The mode ends with `as_data`, also when it unwinds, and nests.
    assert_eq!(postcard::to_allocvec(&copy).unwrap()[0], 0, "handle again (variant 0)");
    let _ = std::panic::catch_unwind(|| carry::as_data(|| panic!("unwinding")));
    let nested = carry::as_data(|| {
        carry::as_data(|| ());
        postcard::to_allocvec(&copy).unwrap()
    });
    assert_eq!(nested[0], 1, "still data after a nested call (variant 1)");
    assert_eq!(postcard::to_allocvec(&copy).unwrap()[0], 0);
    // A self-describing format reads both forms too.
    let json = carry::as_data(|| serde_json::to_string(&copy).unwrap());
    let back: SharedArray<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(back.as_slice(), copy.as_slice());
    // Every element type, halves included; empty arrays too.
    let h = SharedArray::from_slice(&[half::f16::from_f32(1.5), half::f16::from_f32(-2.0)], &[2]).unwrap();
    let back: SharedArray<half::f16> =
        postcard::from_bytes(&carry::as_data(|| postcard::to_allocvec(&h).unwrap())).unwrap();
    assert_eq!(back.as_slice(), h.as_slice());
    let e = SharedArray::<i32>::zeros(&[0, 7]).unwrap();
    let back: SharedArray<i32> = postcard::from_bytes(&carry::as_data(|| postcard::to_allocvec(&e).unwrap())).unwrap();
    assert_eq!(back.shape(), &[0, 7]);
}

#[test]
fn data_that_does_not_fit_its_shape_or_type_is_refused() {
    let a = SharedArray::from_slice(&[1u32, 2, 3, 4], &[4]).unwrap();
    let data = carry::as_data(|| postcard::to_allocvec(&a).unwrap());
    let wrong = postcard::from_bytes::<SharedArray<f32>>(&data).unwrap_err().to_string();
    let why = take_decode_error().unwrap_or(wrong);
    assert!(why.contains("dtype") || why.contains("u32"), "{why}");
    let encode = |shape: Vec<usize>, bytes: Vec<u8>| {
        let c = carry::Carried::Data { dtype: DType::U32, shape, bytes: carry::ElementBytes(bytes.into()) };
        postcard::to_allocvec(&c).unwrap()
    };
    let short = encode(vec![4], vec![0; 15]);
    assert!(postcard::from_bytes::<SharedArray<u32>>(&short).is_err());
    assert!(take_decode_error().unwrap().contains("came with 15 bytes"));
    // A hostile shape is refused before any memory is asked for.
    let huge = encode(vec![1 << 40, 1 << 20], vec![0; 4]);
    assert!(postcard::from_bytes::<SharedArray<u32>>(&huge).is_err());
    let ok: SharedArray<u32> = postcard::from_bytes(&encode(vec![2, 1], 7u64.to_le_bytes().to_vec())).unwrap();
    assert_eq!(ok.as_slice(), &[7, 0]);
}

#[test]
fn i64_u8_and_bool_cross_as_shared_arrays_and_a_byte_that_is_no_bool_is_refused() {
    let i = SharedArray::from_slice(&[i64::MIN, -1, i64::MAX], &[3]).unwrap();
    let u = SharedArray::from_slice(&[0u8, 255, 7], &[3]).unwrap();
    let b = SharedArray::from_slice(&[true, false, true], &[3]).unwrap();
    assert_eq!(SharedArray::<i64>::attach(&i.handle()).unwrap().as_slice(), [i64::MIN, -1, i64::MAX]);
    assert_eq!(SharedArray::<u8>::attach(&u.handle()).unwrap().as_slice(), [0, 255, 7]);
    assert_eq!(SharedArray::<bool>::attach(&b.handle()).unwrap().as_slice(), [true, false, true]);
    assert!(matches!(SharedArray::<u8>::attach(&b.handle()), Err(Error::DTypeMismatch { .. })));
    // A writer outside Rust puts a 2 where a bool belongs: attaching refuses it.
    let at = b.seg.data_ptr().wrapping_add(b.offset + 1);
    // SAFETY: `at` is element 1 of `b`, inside the mapping; no reference to it is alive.
    unsafe { at.write(2) };
    let e = SharedArray::<bool>::attach(&b.handle()).unwrap_err();
    assert!(matches!(&e, Error::SharedMemory { .. }) && e.to_string().contains("not 0 or 1"), "{e}");
    // SAFETY: as above; the byte is a valid bool again before `b` is read or dropped.
    unsafe { at.write(0) };
    assert_eq!(b.as_slice(), [true, false, true]);
    // As data (another host): each dtype round-trips, and a bool's bytes are checked.
    let sent = carry::as_data(|| postcard::to_allocvec(&i).unwrap());
    assert_eq!(postcard::from_bytes::<SharedArray<i64>>(&sent).unwrap().as_slice(), i.as_slice());
    let sent = carry::as_data(|| postcard::to_allocvec(&u).unwrap());
    assert_eq!(postcard::from_bytes::<SharedArray<u8>>(&sent).unwrap().as_slice(), u.as_slice());
    let mut sent = carry::as_data(|| postcard::to_allocvec(&b).unwrap());
    assert_eq!(postcard::from_bytes::<SharedArray<bool>>(&sent).unwrap().as_slice(), b.as_slice());
    // The elements are the encoding's last three bytes: make the middle one a 2.
    let n = sent.len();
    assert_eq!(&sent[n - 3..], [1, 0, 1]);
    sent[n - 2] = 2;
    assert!(postcard::from_bytes::<SharedArray<bool>>(&sent).is_err());
}
